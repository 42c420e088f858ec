/**
 * `npm run sandbox:chat`: runs the sandbox Twitch chat server on its own for a live demo.
 * Prints one JSON line `{"url","token","channel","botLogin",...}` and one readable line on
 * stdout, then echoes what the bot says. Lines typed on stdin are injected as viewer messages:
 *   `viewer42: !enter`            a plain viewer
 *   `+mod +sub12 +vip +first +me +bits100 viewer42: text`   with roles / extras
 * The local Helix API answers on the same port under /helix (everyone follows; `/live` and
 * `/offline` on stdin start and end the channel's stream there).
 * Stays up until a stop signal (platform/signals.ts: SIGINT, SIGTERM, SIGHUP; SIGBREAK on Windows). Options: --port --host --channel --bot-login --token --mod.
 * Deliberately reads no environment variables (config/ is the only reader of process.env).
 */
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { createLogger } from '../../logging/index.js';
import { startChatServer } from './server.js';
import { parseDemoLine } from './demo-input.js';
import { SandboxHelix } from '../helix/index.js';
import { systemClock } from '../../shared/clock.js';
import { shutdownSignals } from '../../platform/signals.js';

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      port: { type: 'string' },
      host: { type: 'string' },
      channel: { type: 'string' },
      'bot-login': { type: 'string' },
      token: { type: 'string' },
      mod: { type: 'boolean' },
    },
  });
  const port = values.port !== undefined ? Number(values.port) : 0;
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    process.stderr.write(`--port must be an integer 0-65535 (got ${values.port})\n`);
    process.exit(2);
  }
  const logger = createLogger({ level: 'warn', destination: process.stderr, name: 'sandbox-chat' });
  const server = await startChatServer({
    port,
    logger,
    ...(values.host ? { host: values.host } : {}),
    ...(values.channel ? { channel: values.channel } : {}),
    ...(values['bot-login'] ? { botLogin: values['bot-login'] } : {}),
    ...(values.token ? { token: values.token } : {}),
    ...(values.mod ? { botIsMod: true } : {}),
    scopes: ['chat:read', 'chat:edit', 'moderator:read:followers'],
  });
  const helix = new SandboxHelix({ auth: server.tokens, clock: systemClock, everyoneFollows: true });
  helix.setUser(server.channelId, server.channel);
  server.mount((req, res) => helix.handle(req, res));
  const out = (s: string): void => void process.stdout.write(`${s}\n`);
  out(
    JSON.stringify({
      url: server.url,
      token: server.token,
      channel: server.channel,
      botLogin: server.botLogin,
      channelId: server.channelId,
    }),
  );
  out(
    `sandbox chat on ${server.url}: channel #${server.channel}, bot ${server.botLogin}, token oauth:${server.token}. Type "viewer42: !enter" to chat, /live or /offline for the stream (Helix at ${server.authUrl.replace(/\/oauth2$/, '/helix')}, client id ${server.clientId}); Ctrl-C stops.`,
  );

  server.on('transcript', (e) => {
    if (e.kind === 'bot' || e.kind === 'viewer') {
      out(
        `${e.kind === 'bot' ? 'BOT ' : ''}<${e.displayName ?? e.login}> ${e.action ? '* ' : ''}${e.bits ? `[${e.bits} bits] ` : ''}${e.text}`,
      );
    } else if (e.kind === 'notice') out(`[NOTICE ${e.msgId}] ${e.text} (dropped: ${e.attempted ?? ''})`);
    else if (e.kind === 'system') out(`-- ${e.text}`);
  });

  const rl = createInterface({ input: process.stdin, terminal: false });
  rl.on('line', (line) => {
    if (!line.trim()) return;
    if (line.trim() === '/live' || line.trim() === '/offline') {
      if (line.trim() === '/live') helix.goLive(server.channelId, server.channel);
      else helix.goOffline(server.channelId);
      out(`-- the stream is ${helix.isLive(server.channelId) ? 'live' : 'offline'} on the local Helix API`);
      return;
    }
    const parsed = parseDemoLine(line);
    if (!parsed) {
      out('?? expected "[+mod] [+vip] [+subN] [+first] [+me] [+bitsN] login: text"');
      return;
    }
    try {
      server.inject(server.viewer(parsed.login, parsed.roles), parsed.text, parsed.extra);
    } catch (err) {
      out(`?? ${err instanceof Error ? err.message : String(err)}`);
    }
  });

  let stopping = false;
  const stop = (): void => {
    if (stopping) return;
    stopping = true;
    rl.close();
    server.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  for (const sig of shutdownSignals(process.platform)) process.on(sig, stop);
}

main().catch((err: unknown) => {
  process.stderr.write(`sandbox chat failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
