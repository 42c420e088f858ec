/**
 * `npm run sandbox:fourthwall`: runs the Fourthwall sandbox alone. Port from `--port N`
 * (default 0: the OS chooses). Prints ONE JSON line `{"apiUrl","shopUrl","username","password",
 * "webhookSecret"}` on stdout, then serves until a stop signal (platform/signals.ts: SIGINT, SIGTERM, SIGHUP; SIGBREAK on Windows). It reads no environment
 * variables and logs nothing else to stdout (the line is the machine-readable contract).
 */
import { startFourthwallSandbox } from './server.js';
import { shutdownSignals } from '../../platform/signals.js';

function parsePort(argv: readonly string[]): number {
  const i = argv.indexOf('--port');
  const inline = argv.find((a) => a.startsWith('--port='));
  const raw = inline ? inline.slice('--port='.length) : i >= 0 ? argv[i + 1] : undefined;
  if (raw === undefined) return 0;
  const port = Number(raw);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new Error(`--port must be an integer from 0 to 65535, got "${raw}"`);
  }
  return port;
}

async function main(): Promise<void> {
  const sandbox = await startFourthwallSandbox({ port: parsePort(process.argv.slice(2)) });
  process.stdout.write(
    `${JSON.stringify({
      apiUrl: sandbox.apiUrl,
      shopUrl: sandbox.shopUrl,
      username: sandbox.username,
      password: sandbox.password,
      webhookSecret: sandbox.webhookSecret,
    })}\n`,
  );
  const stop = (): void => {
    void sandbox.close().then(() => process.exit(0));
  };
  for (const sig of shutdownSignals(process.platform)) process.once(sig, stop);
}

main().catch((err: unknown) => {
  process.stderr.write(`sandbox:fourthwall failed: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
