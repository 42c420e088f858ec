/**
 * Which randomness beacon a running bot uses (the BeaconPort for the giveaway engine), and how
 * the closing chat line tells viewers to check a draw.
 *
 * Contract: `fairness.beacon: "off"` -> none (draws use the seed alone). Live mode -> drand
 * quicknet through GIFTDROP_BEACON_URL (default https://api.drand.sh), key pinned. Sandbox mode ->
 * the sandbox beacon at GIFTDROP_BEACON_URL (the local stack starts one and sets it); without a
 * URL, none (logged). A sandbox beacon that cannot be reached at start-up is reported and the bot
 * runs without one rather than not starting. The caller closes what it gets.
 */
import type { Config } from '../config/index.js';
import { DEFAULT_BEACON_URL, DrandBeacon } from './drand-client.js';
import type { BeaconPort } from '../giveaway/ports.js';
import type { Logger } from '../logging/index.js';
import type { Clock } from '../shared/clock.js';

export interface BotBeacon {
  port?: BeaconPort;
  close(): Promise<void>;
}

export async function beaconForBot(config: Config, opts: { clock: Clock; logger: Logger }): Promise<BotBeacon> {
  const log = opts.logger.child({ module: 'beacon' });
  const none: BotBeacon = { close: async () => undefined };
  if (config.settings.fairness.beacon === 'off') return none;
  let client: DrandBeacon;
  if (config.mode === 'live') {
    client = new DrandBeacon({ url: config.beaconUrl ?? DEFAULT_BEACON_URL, clock: opts.clock, logger: opts.logger });
  } else if (!config.beaconUrl) {
    log.info('sandbox mode without a sandbox beacon: draws use the committed seed alone');
    return none;
  } else {
    try {
      client = await DrandBeacon.connectSandbox({ url: config.beaconUrl, clock: opts.clock, logger: opts.logger });
    } catch (err) {
      log.warn(
        { err: (err as Error).message },
        'the sandbox beacon is not reachable: draws use the committed seed alone',
      );
      return none;
    }
  }
  return { port: client, close: () => client.close() };
}

/**
 * What the closing line names: the public verify page when the bot has a public address
 * (GIFTDROP_PUBLIC_URL + /verify/<id>); otherwise undefined, and the line asks viewers to get that
 * draw's page from the streamer (the announcer's words; `verify <id> --html` writes it: a command
 * or a local address means nothing to a viewer).
 */
export function checkHintFor(config: Config): (id: string) => string | undefined {
  return (id) => (config.publicUrl ? `${config.publicUrl}/verify/${encodeURIComponent(id)}` : undefined);
}
