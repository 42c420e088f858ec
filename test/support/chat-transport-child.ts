/**
 * Child of twitch-websocket.test.ts: the bot's chat client (TwitchChat) in a fresh Node process,
 * so the test chooses which WebSocket tmi.js runs on (Node's flags decide whether the runtime has
 * a built-in one). Connects to CHAT_URL, says LINES lines, waits until Twitch's answers confirmed
 * each (or CONFIRM_WAIT_MS passes), and prints one JSON line: which WebSocket the process had,
 * whether the `ws` package was loaded, and the outbox counters.
 */
import { createRequire } from 'node:module';
import { TwitchChat } from '../../src/twitch/client.js';
import { silentLogger } from '../../src/logging/index.js';

const env = process.env;
const lines = Number(env.LINES ?? 3);
const chat = new TwitchChat({
  url: env.CHAT_URL!,
  channel: env.CHAT_CHANNEL!,
  username: env.CHAT_BOT!,
  token: env.CHAT_TOKEN!,
  logger: silentLogger(),
  confirmTimeoutMs: 60_000,
});
await chat.connect();
for (let i = 0; i < lines; i++) chat.say(`transport line ${i}`, { priority: 'high' });
// (the wait is a failure bound, not a sleep: it ends at the last confirmation)
const confirmed = await new Promise<boolean>((resolve) => {
  const timer = setTimeout(() => resolve(false), Number(env.CONFIRM_WAIT_MS ?? 5000));
  chat.on('sent', () => {
    if (chat.outboxStats().sent < lines) return;
    clearTimeout(timer);
    resolve(true);
  });
});
const loaded = Object.keys(createRequire(import.meta.url).cache).some((k) => /[\\/]node_modules[\\/]ws[\\/]/.test(k));
const stats = chat.outboxStats();
await chat.disconnect();
process.stdout.write(
  `${JSON.stringify({ builtInWebSocket: typeof globalThis.WebSocket === 'function', wsPackageLoaded: loaded, confirmed, ...stats })}\n`,
);
process.exit(0);
