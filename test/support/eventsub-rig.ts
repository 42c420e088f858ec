/**
 * An EventSub rig for tests: the sandbox EventSub WebSocket server, the Helix sandbox (its
 * subscription routes, channel points, a broadcaster's login in SandboxAccounts) on a real HTTP
 * port, a HelixClient with the broadcaster's token and the bot's EventSubClient, all on one clock.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { silentLogger, type Logger } from '../../src/logging/index.js';
import { SandboxAccounts } from '../../src/sandbox/helix/accounts.js';
import { SandboxHelix } from '../../src/sandbox/helix/index.js';
import {
  registerEventSubRoutes,
  startEventSubSandbox,
  type EventSubSandbox,
} from '../../src/sandbox/eventsub/index.js';
import type { Clock } from '../../src/shared/clock.js';
import { NO_RETRY, type Backoff } from '../../src/shared/retry.js';
import { HelixClient } from '../../src/twitch/helix.js';
import { EventSubClient } from '../../src/twitch/eventsub/client.js';

const CLIENT_ID = 'giftdroptestclient';
export const BROADCASTER_ID = '1001';

export interface EventSubRig {
  clock: Clock;
  es: EventSubSandbox;
  helix: SandboxHelix;
  accounts: SandboxAccounts;
  apiUrl: string;
  /** A Helix client with the broadcaster's (current) token. */
  broadcasterHelix: HelixClient;
  client: EventSubClient;
  close(): Promise<void>;
}

export async function eventSubRig(o: {
  clock: Clock;
  scopes?: string[];
  keepaliveSeconds?: number;
  backoff?: { drop?: Backoff; limit?: Backoff };
  logger?: Logger;
}): Promise<EventSubRig> {
  const { clock } = o;
  const logger = o.logger ?? silentLogger();
  const es = await startEventSubSandbox({ clock });
  const accounts = new SandboxAccounts({ clock, clientId: () => CLIENT_ID, clientSecret: () => 'sandboxsecret' });
  const helix = new SandboxHelix({ auth: { accepts: () => false, clientId: CLIENT_ID, scopes: [] }, clock, accounts });
  registerEventSubRoutes(helix, es);
  const http = createServer((req, res) => {
    if (!helix.handle(req, res)) {
      res.writeHead(404);
      res.end();
    }
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const apiUrl = `http://127.0.0.1:${(http.address() as AddressInfo).port}/helix`;
  const broadcaster = accounts.add({
    userId: BROADCASTER_ID,
    login: 'streamer',
    scopes: o.scopes ?? ['channel:manage:redemptions', 'bits:read'],
  });
  const broadcasterHelix = new HelixClient({
    apiUrl,
    clientId: CLIENT_ID,
    token: {
      current: () => accounts.of(BROADCASTER_ID)?.token ?? broadcaster.token,
      canRefresh: () => false,
      refresh: () => Promise.resolve(),
    },
    clock,
    logger,
    retry: NO_RETRY,
    deadlineMs: 60_000,
  });
  const client = new EventSubClient({
    url: es.url,
    keepaliveSeconds: o.keepaliveSeconds ?? 30,
    helixFor: (a) => (a === 'broadcaster' ? broadcasterHelix : undefined),
    clock,
    logger,
    backoff: o.backoff ?? {
      drop: { baseMs: 100, maxMs: 100, jitter: 'none' },
      limit: { baseMs: 30_000, maxMs: 30_000, jitter: 'none' },
    },
  });
  return {
    clock,
    es,
    helix,
    accounts,
    apiUrl,
    broadcasterHelix,
    client,
    async close() {
      client.stop();
      await broadcasterHelix.close();
      await es.close();
      await new Promise<void>((resolve) => {
        http.close(() => resolve());
        http.closeAllConnections();
      });
    },
  };
}

/** Resolves once `fn()` is true (polled in real time); rejects naming `what` after `ms`. */
export async function until(fn: () => boolean, what: string, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!fn()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}
