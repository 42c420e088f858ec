/**
 * The bot's chat works on both WebSockets tmi.js 1.8.5 may run on: the runtime's built-in one
 * (what tmi.js picks whenever it exists: Node 22 and newer by default, Node 20 with
 * --experimental-websocket) and the `ws` package (Node 20 by default, newer Nodes with
 * --no-experimental-websocket). Each case runs the real TwitchChat in a child Node process of the
 * Node running the suite, against the sandbox chat server over a real socket, and fails when a
 * line the bot says is not confirmed by Twitch's USERSTATE (the failure of issue 27: on the
 * built-in WebSocket the old USERSTATE tap saw nothing). CI runs this file on Node 24, 22 and 20.
 */
import { spawn } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { startChatServer, type ChatServer } from '../src/sandbox/chat/index.js';

const major = Number(process.versions.node.split('.')[0]);
/** Node flags that give tmi.js each WebSocket on the Node running the suite. */
const transports = [
  { name: 'the built-in WebSocket', builtIn: true, flags: major >= 22 ? [] : ['--experimental-websocket'] },
  { name: 'the ws package', builtIn: false, flags: major >= 22 ? ['--no-experimental-websocket'] : [] },
];

let server: ChatServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

interface ChildReport {
  builtInWebSocket: boolean;
  wsPackageLoaded: boolean;
  confirmed: boolean;
  sent: number;
  written: number;
  unconfirmed: number;
  dropped: number;
}

function runChild(s: ChatServer, flags: string[], lines: number): Promise<ChildReport> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...flags, '--import', 'tsx', 'test/support/chat-transport-child.ts'], {
      env: {
        ...process.env,
        CHAT_URL: s.url,
        CHAT_CHANNEL: s.channel,
        CHAT_BOT: s.botLogin,
        CHAT_TOKEN: s.token,
        LINES: String(lines),
        CONFIRM_WAIT_MS: '8000',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('exit', (code) => {
      const last = out.trim().split('\n').at(-1);
      if (code !== 0 || !last) return reject(new Error(`child exited ${code}: ${err.slice(-2000)}`));
      resolve(JSON.parse(last) as ChildReport);
    });
  });
}

describe(`chat on each WebSocket tmi.js can use (Node ${process.versions.node})`, () => {
  for (const t of transports) {
    it(`on ${t.name}: every line the bot says is confirmed by Twitch's USERSTATE`, async () => {
      server = await startChatServer({ botIsMod: true });
      const report = await runChild(server, t.flags, 5);
      // The child ran on the WebSocket this case is about.
      expect(report.builtInWebSocket).toBe(t.builtIn);
      expect(report.wsPackageLoaded).toBe(!t.builtIn);
      // Every line was said once and confirmed: none unconfirmed, none dropped, none written twice.
      expect(report).toMatchObject({ confirmed: true, sent: 5, written: 5, unconfirmed: 0, dropped: 0 });
      expect(server.botMessages()).toEqual(Array.from({ length: 5 }, (_, i) => `transport line ${i}`));
    }, 30_000);
  }
});
