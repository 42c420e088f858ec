/**
 * USERSTATE lines (and the PONGs of the half-open probe, confirm-watch.ts) for the chat client,
 * read in its chat worker (tmi-host.ts), without paying tmi.js's `raw_message` copy on every chat line.
 *
 * Why: tmi.js 1.8.5 has no event for USERSTATE, so the client reads it from `raw_message`; but
 * while a `raw_message` listener is attached, tmi.js deep-copies every line it receives
 * (`JSON.parse(JSON.stringify(message))`), chat lines included. The bot needs USERSTATE whenever
 * one of its lines awaits Twitch's answer, which under a chat flood is exactly when the socket
 * holds a backlog (the answer queues behind it): the copies tripled the cost of each `!enter`.
 *
 * Contract: `tapUserState(socket, tmiEvents, onRaw)` attaches `onRaw` to tmi.js's `raw_message`
 * only while tmi.js handles a frame (WebSocket message) whose bytes contain `USERSTATE` or `PONG`, and
 * detaches it right after, so `onRaw` sees every USERSTATE line in tmi.js's own order (a
 * ROOMSTATE after it in the frame is handled after it, as before) and a frame without one costs
 * one native `indexOf` over its bytes. A chat line that merely contains the word only makes its
 * frame copied. It adds two listeners to the `ws` socket tmi.js opened (one before tmi.js's own,
 * one after); nothing of tmi.js is replaced. Once per socket. `tmiSocket(client)` reads the
 * socket tmi.js holds right now (its `ws` property; undefined while it has none).
 */
import type { EventEmitter } from 'node:events';

/** The parts of a `ws` WebSocket (a Node EventEmitter) this module uses. */
export type FrameSource = Pick<EventEmitter, 'prependListener' | 'on'>;

const tapped = new WeakSet<object>();
const MARKS = [Buffer.from('USERSTATE'), Buffer.from('PONG')];

/** The socket tmi.js's client holds right now (its `ws` property), when it has one. */
export function tmiSocket(client: object): FrameSource | undefined {
  const ws = (client as { ws?: unknown }).ws as Partial<FrameSource> | null | undefined;
  return ws && typeof ws.prependListener === 'function' && typeof ws.on === 'function' ? (ws as FrameSource) : undefined;
}

/** True unless the frame certainly carries no USERSTATE or PONG (unknown shapes count as carrying one). */
function mayCarryUserState(data: unknown): boolean {
  if (Buffer.isBuffer(data)) return MARKS.some((mark) => data.indexOf(mark) !== -1);
  if (typeof data === 'string') return data.includes('USERSTATE') || data.includes('PONG');
  return true;
}

/** See the module header. */
export function tapUserState(
  socket: FrameSource,
  tmiEvents: Pick<EventEmitter, 'on' | 'off'>,
  onRaw: (copy: unknown, message: { command?: string; params?: string[]; tags?: Record<string, unknown> }) => void,
): void {
  if (tapped.has(socket)) return;
  tapped.add(socket);
  let on = false;
  // Runs before tmi.js's handler of the same frame...
  socket.prependListener('message', (data: unknown) => {
    if (on || !mayCarryUserState(data)) return;
    on = true;
    tmiEvents.on('raw_message', onRaw);
  });
  // ...and this one after it (tmi.js set its handler when it opened the socket, before us).
  socket.on('message', () => {
    if (!on) return;
    on = false;
    tmiEvents.off('raw_message', onRaw);
  });
}
