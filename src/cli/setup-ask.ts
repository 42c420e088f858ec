/**
 * `setup` on a terminal with nothing set up yet (a headless machine): the setup page's questions,
 * asked one by one through the same SetupService (src/setup/setup-service.ts), so each answer is
 * checked the same way and saved in the same files: the Fourthwall API user and password, the
 * webhook secret, the Twitch application's client id (when the build has none), the bot's Twitch
 * login by device code (the code and the page to open are printed; the login can be done on any
 * device), optionally the broadcaster's, the channel, and the public address (checked through the
 * tunnel: the address check is served on HTTP_PORT while setup runs). A wrong answer says what to
 * fix and asks again; an empty answer to an optional question skips it. Passwords and secrets are
 * not echoed. At the end the setup is marked ready (the page's "Go live"), and `runSetup` checks it.
 * Does not: start the bot.
 */
import { createServer, type Server } from 'node:http';
import { createInterface } from 'node:readline/promises';
import { Writable } from 'node:stream';
import type { Config } from '../config/index.js';
import type { Logger } from '../logging/index.js';
import { systemClock } from '../shared/clock.js';
import { giftdropCommand } from '../platform/invocation.js';
import { SetupService, type SetupRow } from '../setup/setup-service.js';

export interface AskSetupOptions {
  config: Config;
  logger: Logger;
  input: NodeJS.ReadableStream;
  output: NodeJS.WritableStream;
}

/** Asks every question; resolves true when the setup was saved ready, false when the user gave up (end of input). */
export async function askSetup(o: AskSetupOptions): Promise<boolean> {
  let muted = false;
  const echo = new Writable({
    write(chunk: Buffer, _enc, done) {
      if (!muted) o.output.write(chunk);
      done();
    },
  });
  const rl = createInterface({ input: o.input, output: echo, terminal: true });
  const say = (line: string): void => void o.output.write(`${line}\n`);
  let ended = false;
  rl.on('close', () => (ended = true));
  const ask = async (question: string, secret = false): Promise<string | undefined> => {
    if (ended) return undefined;
    o.output.write(question);
    muted = secret;
    try {
      return (await rl.question('')).trim();
    } catch {
      return undefined;
    } finally {
      if (secret) o.output.write('\n');
      muted = false;
    }
  };
  const service = new SetupService({ config: o.config, logger: o.logger, clock: systemClock, lockHeld: false });
  // The public address is checked through the tunnel: this bot's port answers the check while setup runs.
  const server: Server = createServer((req, res) => {
    if (!service.publicRoute(req, res)) res.writeHead(404).end();
  });
  const listening = await new Promise<boolean>((resolve) => {
    server.once('error', () => resolve(false));
    server.listen(o.config.http.port, o.config.http.host, () => resolve(true));
  });
  const show = (row: SetupRow): boolean => {
    say(`  ${row.status === 'ok' ? 'ok  ' : 'FIX '} ${row.title}: ${row.detail}`);
    return row.status === 'ok';
  };
  const rowOf = (id: SetupRow['id']): SetupRow => service.state().rows.find((r) => r.id === id)!;
  try {
    say("giftdrop setup: the setup page's questions, on this terminal. Ctrl+D gives up (nothing half-done is used).");
    for (;;) {
      if (rowOf('fourthwall').status === 'ok' && rowOf('fourthwall').fromEnv) break;
      say('Fourthwall: Settings > For developers > Open API > create an API user (as SUPER ADMIN).');
      const user = await ask('Fourthwall API username: ');
      if (user === undefined) return false;
      const pass = await ask('Fourthwall API password (not shown): ', true);
      if (pass === undefined) return false;
      if (show(await service.setFourthwall(user, pass))) break;
    }
    while (!(rowOf('secret').fromEnv && rowOf('secret').status === 'ok')) {
      const secret = await ask('Webhook secret (Fourthwall: Settings > For developers > Webhooks; not shown): ', true);
      if (secret === undefined) return false;
      if (show(await service.setSecret(secret))) break;
    }
    while (rowOf('client-id').status !== 'ok') {
      say(rowOf('client-id').detail);
      const id = await ask('Client ID: ');
      if (id === undefined) return false;
      show(await service.setClientId(id));
    }
    for (const role of ['bot', 'broadcaster'] as const) {
      if (rowOf(role).fromEnv) continue;
      if (role === 'broadcaster') {
        const yes = await ask(
          "Also log in the broadcaster's account (channel points, Bits, follower checks as you)? [y/N] ",
        );
        if (yes === undefined) return false;
        if (!/^y/i.test(yes)) continue;
      }
      for (;;) {
        const started = await service.startLogin(role);
        if (!started.pending) {
          show(started);
          const again = await ask('Press Enter to try again: ');
          if (again === undefined) return false;
          continue;
        }
        say(
          `Twitch login for ${role === 'bot' ? 'the bot account' : "the broadcaster's account"}: open ${started.pending.verificationUri}`,
        );
        say(
          `(on any device, logged in to Twitch as ${role === 'bot' ? 'the bot account' : 'yourself'}) and enter the code ${started.pending.userCode}. Waiting...`,
        );
        const row = await waitForLogin(() => rowOf(role));
        if (show(row)) break;
      }
    }
    while (rowOf('channel').status !== 'ok') {
      const channel = await ask('Your channel (your Twitch login): ');
      if (channel === undefined) return false;
      show(await service.setChannel(channel));
    }
    if (!listening)
      say(
        `(port ${o.config.http.port} is busy: is the bot running? The address check needs this port; stop the bot or use the setup page.)`,
      );
    while (!(rowOf('public-url').fromEnv && rowOf('public-url').status === 'ok')) {
      const url = await ask(
        `Public address (your tunnel's https://..., pointed at http://127.0.0.1:${o.config.http.port}): `,
      );
      if (url === undefined) return false;
      if (show(await service.setPublicUrl(url))) break;
    }
    const applied = await service.apply();
    if (!applied.ok) {
      say(`Still to do: ${applied.missing.join(', ')}`);
      return false;
    }
    say(
      `Saved in the data folder (owner-only). Start the bot (${giftdropCommand('start')}): it goes live with this setup.`,
    );
    return true;
  } finally {
    rl.close();
    await new Promise((r) => server.close(r));
    await service.close();
  }
}

/** Polls the service until the login row is no longer waiting. */
async function waitForLogin(row: () => SetupRow): Promise<SetupRow> {
  for (;;) {
    const r = row();
    if (r.status !== 'pending') return r;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}
