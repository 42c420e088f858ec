/**
 * The live-mode parts around the EventIntake that talk to Fourthwall: pinning the bot's shop id
 * (`GET /shops/current`), starting the catch-up poll of `GET /webhook-events`, and the start-up
 * notice about operations that the published OpenAPI document allows with Basic auth only.
 *
 * Contract: `pinnedShopId` reads the shop once and caches it; a failed read is not cached (the
 * next event asks again, and the event stays unprocessed meanwhile). `startCatchUp` runs the poll
 * only in live mode with an interval above 0 (FOURTHWALL_EVENT_POLL_SECONDS); its first pass runs
 * at once, in the background, so a slow or unreachable Fourthwall never holds up the start.
 * `basicOnlyNotice` names the operations an OAuth-only configuration may be refused.
 * Does not: handle events (event-intake.ts) or read the list itself (event-poll.ts).
 */
import type { Config } from '../config/index.js';
import { OPERATIONS, type FourthwallClient } from '../fourthwall/index.js';
import type { Logger } from '../logging/index.js';
import type { Clock } from '../shared/clock.js';
import type { EventIntake } from './event-intake.js';
import { EventPoller } from './event-poll.js';

/** A function giving the bot's shop id, read once from `GET /shops/current`. */
export function pinnedShopId(client: Pick<FourthwallClient, 'getCurrentShop'>, log: Logger): () => Promise<string> {
  let pinned: Promise<string> | undefined;
  return () => {
    pinned ??= client.getCurrentShop().then(
      (shop) => {
        log.info({ shopId: shop.id }, 'events of other shops will be refused');
        return shop.id;
      },
      (err: unknown) => {
        pinned = undefined;
        throw err;
      },
    );
    return pinned;
  };
}

/** The operations the bot calls that the published document allows with Basic auth only. */
const BASIC_ONLY_CALLS = [
  'finishDraw',
  'getDraw',
  'streamingStart',
  'streamingEnd',
  'getStreamingStatus',
  'getGiftPurchase',
] as const;

/** One line for live mode with OAuth-only credentials; undefined when Basic credentials are set. */
export function basicOnlyNotice(config: Config): string | undefined {
  if (config.fourthwall.auth.kind !== 'oauth') return undefined;
  const paths = BASIC_ONLY_CALLS.map((k) => `${OPERATIONS[k].method} ${OPERATIONS[k].path}`);
  return (
    `Fourthwall's published API document allows only Basic auth for ${paths.join(', ')}: ` +
    'with OAuth credentials alone, finishing gift draws and the streaming status may be refused; ' +
    'set FOURTHWALL_USERNAME and FOURTHWALL_PASSWORD (the shop API user) to be safe'
  );
}

export interface CatchUpOptions {
  config: Config;
  client: Pick<FourthwallClient, 'listWebhookEvents'>;
  intake: EventIntake;
  types: readonly string[];
  clock: Clock;
  logger: Logger;
  /** Overrides FOURTHWALL_EVENT_POLL_SECONDS (tests). */
  intervalMs?: number;
  /** Runs the poll in sandbox mode too (tests). */
  force?: boolean;
}

/** Starts the catch-up poll when live mode asks for it; returns it (undefined when off). */
export function startCatchUp(o: CatchUpOptions): EventPoller | undefined {
  const intervalMs = o.intervalMs ?? (o.config.fourthwall.eventPollSeconds ?? 5) * 1000;
  if ((o.config.mode !== 'live' && !o.force) || intervalMs <= 0) return undefined;
  const poller = new EventPoller({
    list: (q) => o.client.listWebhookEvents(q),
    types: o.types,
    intervalMs,
    clock: o.clock,
    logger: o.logger,
    isKnown: (id) => o.intake.isKnown(id),
    submit: (event, source) => o.intake.submit(event, source),
  });
  void poller.start();
  return poller;
}
