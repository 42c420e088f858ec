/**
 * `npm start`: loads the config once, builds the logger, and runs the bot in live mode or, with
 * no credentials, in sandbox mode (local Fourthwall sandbox + local Twitch chat, same code paths).
 * SIGINT/SIGTERM shut down cleanly. Exit codes: 0 clean, 1 config/credential/startup failure (or a
 * failed step of the sandbox demo).
 */
import { loadConfigOrExit, secretValues } from './config/index.js';
import { createLogger } from './logging/index.js';
import { startBot } from './app/bot.js';
import { compactLogStream } from './app/demo/output.js';
import { LiveConsole } from './app/live-console.js';
import { TwitchAuthError } from './twitch/index.js';

const config = loadConfigOrExit();
// Sandbox mode prints its transcript on stdout: logs go to stderr, one short line each, at warn
// unless LOG_LEVEL was set.
const logger =
  config.mode === 'sandbox'
    ? createLogger({
        level: config.logLevelExplicit ? config.logLevel : 'warn',
        destination: compactLogStream(process.stderr, process.stderr.isTTY === true),
        secrets: secretValues(config),
      })
    : process.stdout.isTTY // live on a terminal: stdout is the live console; logs one line each on stderr
      ? createLogger({ level: config.logLevelExplicit ? config.logLevel : 'warn', destination: compactLogStream(process.stderr, process.stderr.isTTY === true), secrets: secretValues(config) })
      : createLogger({ level: config.logLevel, secrets: secretValues(config) });

function onSignals(stop: (reason: string) => Promise<void>): void {
  let count = 0;
  for (const sig of ['SIGINT', 'SIGTERM'] as const) {
    process.on(sig, () => {
      if (++count > 1) process.exit(130);
      void stop(sig).then(
        () => process.exit(0),
        () => process.exit(1),
      );
    });
  }
}

try {
  if (config.mode === 'sandbox') {
    // Loaded only here: live mode never loads the sandboxes.
    const { runSandboxMode } = await import('./app/sandbox-mode.js');
    const code = await runSandboxMode({ config, logger, onSignals });
    process.exitCode = code;
  } else {
    const live = process.stdout.isTTY ? new LiveConsole({ out: process.stdout, tty: true }) : undefined;
    const bot = await startBot({ config, logger, ...(live ? { operator: live.operator } : {}) });
    live?.attach(bot);
    onSignals((reason) => (live?.close(), bot.stop(reason)));
    // A token refused on a later reconnect: say which variable to fix and exit, never loop.
    bot.chat.on('fatal', () => {
      logger.fatal('Twitch refused the login after a reconnect: check TWITCH_TOKEN (it may have expired or been revoked).');
      void bot.stop('chat authentication failed').finally(() => process.exit(1));
    });
  }
} catch (err) {
  if (err instanceof TwitchAuthError) {
    logger.fatal(`Twitch refused the login: check TWITCH_TOKEN (a user token of ${config.twitch.username ?? 'the bot'} with chat:read chat:edit) and TWITCH_USERNAME.`);
  } else {
    logger.fatal({ err }, `giftdrop could not start: ${(err as Error).message}`);
  }
  process.exit(1);
}
