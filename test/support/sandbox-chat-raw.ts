/**
 * Test helper: a bare WebSocket IRC client (subprotocol `irc`) that records every line the
 * sandbox chat server sends, for assertions below what tmi.js exposes (frame contents, exact
 * lines, over-long messages tmi.js would split).
 */
import { WebSocket } from 'ws';

export interface RawIrcClient {
  ws: WebSocket;
  /** Every line received, in order. */
  lines: string[];
  /** Number of frames received. */
  frames: number;
  send(...lines: string[]): void;
  /** Resolves with the first received line (from index `from`) matching `re`. */
  waitForLine(re: RegExp, from?: number, timeoutMs?: number): Promise<string>;
  /** Resolves once the socket is closed. */
  closed: Promise<number>;
  close(): void;
}

export async function rawClient(url: string, protocol: string | undefined = 'irc'): Promise<RawIrcClient> {
  const ws = protocol ? new WebSocket(url, protocol) : new WebSocket(url);
  const lines: string[] = [];
  const listeners = new Set<() => void>();
  const client: RawIrcClient = {
    ws,
    lines,
    frames: 0,
    send: (...ls) => ws.send(ls.join('\r\n')),
    waitForLine(re, from = 0, timeoutMs = 5000) {
      return new Promise<string>((resolve, reject) => {
        const check = (): boolean => {
          for (let i = from; i < lines.length; i++) {
            if (re.test(lines[i]!)) {
              listeners.delete(check);
              clearTimeout(timer);
              resolve(lines[i]!);
              return true;
            }
          }
          return false;
        };
        const timer = setTimeout(() => {
          listeners.delete(check);
          reject(new Error(`no line matching ${re} within ${timeoutMs} ms; got:\n${lines.slice(from).join('\n')}`));
        }, timeoutMs);
        if (!check()) listeners.add(check);
      });
    },
    closed: new Promise<number>((resolve) => ws.once('close', (code) => resolve(code))),
    close: () => ws.close(),
  };
  ws.on('message', (data) => {
    client.frames++;
    const bytes = Array.isArray(data) ? Buffer.concat(data) : Buffer.isBuffer(data) ? data : Buffer.from(data);
    for (const l of bytes.toString().split('\r\n')) if (l) lines.push(l);
    for (const fn of [...listeners]) fn();
  });
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  return client;
}

/** Logs a raw client in as the bot (CAP + PASS + NICK) and waits for 376. */
export async function rawLogin(c: RawIrcClient, token: string, nick = 'giftdrop_bot'): Promise<void> {
  const from = c.lines.length;
  c.send('CAP REQ :twitch.tv/tags twitch.tv/commands twitch.tv/membership', `PASS oauth:${token}`, `NICK ${nick}`);
  await c.waitForLine(/ 376 /, from);
}
