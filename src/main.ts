/**
 * `npm start`: loads the config once, builds the logger, and runs the bot in live mode or, with
 * no credentials, in sandbox mode (local Fourthwall sandbox + local Twitch chat, same code paths).
 * It first takes the data directory's lock (one bot per data directory; the mode's folder, see
 * src/config/mode.ts), before anything there is read. SIGINT/SIGTERM/SIGHUP shut down cleanly
 * (app/signals.ts), in every phase: a stop asked for while starting aborts the start-up work in
 * flight (app/bot.ts `signal`) rather than waiting for it. Logs go to stderr (and LOG_FILE); stdout is the operator console. A busy
 * HTTP_PORT is reported before chat is joined. Live start-up loads no sandbox or demo module.
 * The setup page (src/setup) lives for the whole process: from the demo, its "Go live" stops the demo
 * and starts the live bot in this process; in live mode its "Apply" restarts the bot in this process,
 * under the same data lock (the page took the live DATA_DIR lock on its first save).
 * Exit codes: 0 clean (a stop included), 1 config/credential/lock/startup failure, a stop that
 * could not save the draws or the history (said in one line), or a failed step of the sandbox demo.
 */
import { loadConfigOrExit, riskySettings, secretValues } from './config/index.js';
import { createLogger, prettyDestination, registerSecret } from './logging/index.js';
import { SetupService } from './setup/setup-service.js';
import { setupRoute } from './setup/setup-routes.js';
import { systemClock } from './shared/clock.js';
import { startBot, type Bot } from './app/bot.js';
import { compactLogStream } from './console/console-text.js';
import { LiveConsole } from './console/live-console.js';
import { TwitchAuthError } from './twitch/index.js';
import { join } from 'node:path';
import { existsSync } from 'node:fs';
import { lockDataDirOrExit } from './app/data-lock.js';
import { TOKEN_FILE } from './web/operator/dashboard-auth.js';
import { TwitchTokenError } from './twitch/auth.js';
import { onShutdownSignals } from './app/signals.js';
import { addressInUseLine, checkPortFree, isAddressInUse } from './app/port-check.js';
import { widenHeapGrowth } from './platform/heap-growth.js';

/** npm's progress spinner may sit on the terminal's current line: a clean line at start and at exit. */
function clearLine(): void {
  if (process.stderr.isTTY === true) process.stderr.write('\r\u001b[2K');
}

/** Runs the bot (or the sandbox demo) until it stops; every way out sets the exit code or exits. */
async function main(): Promise<void> {
  // A chat flood's garbage: the heap may grow further between full collections (see the module).
  widenHeapGrowth();
  clearLine();
  process.once('exit', clearLine);
  let config = loadConfigOrExit();
  // `npm start -- --reset` (an argument, so it works the same in cmd.exe and PowerShell): sandbox
  // mode starts its new world with a new dashboard token too. Live data is never reset.
  const reset = process.argv.slice(2).includes('--reset');
  if (reset && config.mode !== 'sandbox') {
    process.stderr.write(
      'giftdrop: --reset clears the sandbox data only (DATA_DIR/sandbox), and this is live mode: live data is never reset. Run it without live credentials or with GIFTDROP_MODE=sandbox.\n',
    );
    process.exit(1);
  }
  // stdout is the transcript (the sandbox demo's, or the live console on a terminal): logs then go
  // to stderr one short line each, at warn unless LOG_LEVEL was set. Otherwise pino JSON on stderr.
  const compact = config.mode === 'sandbox' || process.stdout.isTTY === true;
  // (pino JSON on stderr: pretty when stderr alone is a terminal.)
  const destination = compact
    ? compactLogStream(process.stderr, process.stderr.isTTY === true)
    : process.stderr.isTTY === true
      ? await prettyDestination(2)
      : undefined;
  const logger = createLogger({
    level: compact && !config.logLevelExplicit ? 'warn' : config.logLevel,
    ...(destination ? { destination } : {}),
    secrets: secretValues(config),
    file: config.logFile,
  });
  // Said once: a DATA_DIR the user set that did not exist (a typo?) is created, with its parents,
  // by the lock. The default ./data on a first run is created without a word (not a warning as
  // the first line a newcomer sees).
  const dataRoot = config.dataRoot ?? config.dataDir;
  const dataRootExisted = existsSync(dataRoot);
  // One bot per data directory, taken before anything in it is read; released on exit.
  await lockDataDirOrExit(config.dataDir, (message) => logger.warn(message), {
    ...(config.dataRoot ? { dataRoot: config.dataRoot } : {}),
    secretFiles: config.dashboardToken ? [] : [join(config.dataDir, TOKEN_FILE)],
  });
  if (!dataRootExisted && config.dataDirSet)
    logger.warn(
      `DATA_DIR ${dataRoot} did not exist: created it (and its parents); the bot's history, open draws and dashboard token go there.`,
    );
  for (const line of riskySettings(config)) logger.warn(line);

  // The shutdown signals are owned once for the whole process; what they stop follows the phase
  // (the sandbox demo, then the live bot, which the setup page may restart).
  let stopCurrent: (reason: string) => Promise<void> = () => Promise.resolve();
  onShutdownSignals((reason) => stopCurrent(reason), {
    onDeadline: (ms) => logger.error(`shutdown did not finish within ${ms} ms; exiting (open draws stay journaled)`),
    onFailed: (err) => logger.error(`shutdown failed: ${err instanceof Error ? err.message : String(err)}`),
  });
  const onSignals = (stop: (reason: string) => Promise<void>): void => {
    stopCurrent = stop;
  };
  // The setup page (src/setup): the same for the demo and the live bot, which it can (re)start.
  const setup = new SetupService({
    config,
    logger,
    clock: systemClock,
    lockHeld: config.mode === 'live',
    warn: (m) => logger.warn(m),
  });
  const liveDataDir = config.dataRoot ?? config.dataDir;
  /** Aborted by a stop asked for before the bot finished starting. */
  let startup = new AbortController();

  try {
    if (config.mode === 'sandbox') {
      // Loaded only here: live mode never loads the sandboxes.
      const { runSandboxMode } = await import('./local/sandbox-mode.js');
      const route = setupRoute(setup, {
        dataDir: config.dataDir,
        ...(config.dashboardToken ? { dashboardToken: config.dashboardToken } : {}),
        liveDataDir,
      });
      const code = await runSandboxMode({
        config,
        logger,
        onSignals,
        reset,
        bot: { localRoutes: [route], publicRoutes: [setup.publicRoute] },
        goLive: setup.applied(),
        setupUrl: (local) => `${local}/setup`,
      });
      if (code !== 'go-live') {
        process.exitCode = code;
        await setup.close();
        return;
      }
      // The page saved a complete setup: the same process goes live with it (no restart by hand).
      config = loadConfigOrExit();
      for (const secret of secretValues(config)) registerSecret(logger, secret);
      if (config.mode !== 'live') {
        process.stderr.write(
          'giftdrop: the setup page finished, but the configuration is not live (GIFTDROP_MODE=sandbox?): remove GIFTDROP_MODE from .env and start again.\n',
        );
        process.exit(1);
      }
    }
    for (let first = true; ; first = false) {
      if (first) {
        const busy =
          (await checkPortFree(config.http.host, config.http.port)) ??
          (await checkPortFree(config.http.localBind, config.http.localPort, 'GIFTDROP_LOCAL_PORT'));
        if (busy) {
          process.stderr.write(`giftdrop: ${busy}\n`);
          process.exit(1);
        }
      }
      // Signals are owned from here on: /healthz may answer before chat is connected, and a stop
      // asked for meanwhile aborts the start-up work in flight (startBot then cleans up and keeps
      // the open draws journaled) instead of waiting for it.
      // stdout is the live console: the transcript (plain lines without a terminal; on a terminal in
      // colour with a status line, and with the winners' links).
      const live = new LiveConsole({ out: process.stdout, tty: process.stdout.isTTY === true });
      let running: Bot | undefined;
      startup = new AbortController();
      const route = setupRoute(setup, {
        dataDir: config.dataDir,
        ...(config.dashboardToken ? { dashboardToken: config.dashboardToken } : {}),
        liveDataDir,
      });
      const starting = startBot({
        config,
        logger,
        operator: live.operator,
        signal: startup.signal,
        loginStore: await setup.loginStore(),
        localRoutes: [route],
        publicRoutes: [setup.publicRoute],
        checkPublicUrl: (url, signal) => setup.checkPublicUrl(url, signal),
      });
      onSignals(async (reason) => {
        live.close();
        if (!running) startup.abort(new Error(`stopped by ${reason} during start-up`));
        const started = await starting.catch((err: unknown) => {
          if (err === startup.signal.reason) return undefined; // cleaned up and said "stopped"
          throw err;
        });
        await started?.stop(reason);
      });
      const bot = (running = await starting);
      live.attach(bot);
      setup.attach(
        config,
        () => bot.health().problems ?? [],
        () => bot.twitchEvents,
        () => bot.reach(),
      );
      live.operator.notify(
        `setup page (change the channel, the logins or the tunnel address) at ${bot.http.localUrl}/setup`,
      );
      // A token from .env refused on a later reconnect: say which variable to fix and exit, never
      // loop. A login saved by the setup page stays up instead (the dashboard and /healthz say to
      // log in again on the page, which restarts the bot).
      bot.chat.on('fatal', (err: Error) => {
        if (!config.twitch.token) return;
        logger.fatal(
          `Twitch refused the login after a reconnect: check TWITCH_TOKEN (it may have expired or been revoked). ${err.message}`,
        );
        void bot.stop('chat authentication failed').finally(() => process.exit(1));
      });
      await setup.applied();
      // "Apply" on the setup page: the bot restarts with the saved setup, in this process, under the same data lock.
      running = undefined;
      live.close();
      await bot.stop("restarting with the setup page's changes");
      config = loadConfigOrExit();
      for (const secret of secretValues(config)) registerSecret(logger, secret);
    }
  } catch (err) {
    // A stop during start-up: the signal handler reports it and exits (0, or 1 naming what was not saved).
    if (!startup.signal.aborted) {
      if (err instanceof TwitchTokenError) {
        logger.fatal({ code: err.code }, err.message);
      } else if (isAddressInUse(err)) {
        process.stderr.write(`giftdrop: ${addressInUseLine(err, config.http)}\n`);
      } else if (err instanceof TwitchAuthError) {
        logger.fatal(
          `Twitch refused the login: check TWITCH_TOKEN (a user token of ${config.twitch.username ?? 'the bot'} with chat:read chat:edit) and TWITCH_USERNAME.`,
        );
      } else {
        logger.fatal({ err }, `giftdrop could not start: ${(err as Error).message}`);
      }
      process.exit(1);
    }
  }
}

// No top-level await: the single executable (scripts/package.mjs) bundles this module as CommonJS.
main().catch((err: unknown) => {
  process.stderr.write(`giftdrop could not start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
