/**
 * The two chat sandboxes of e2e-2-chat.bench.ts on a thread of their own (a worker running
 * bench/support/chat-sandboxes-worker.ts), so that the CPU they spend building frames and writing
 * lines to their sockets is not on the thread of the bot or of the bare tmi.js client they feed:
 * - `bot`: the local chat server with the local Helix API on its port, as startLocalStack builds it
 *   (startLocalChat; the bot is a moderator); the bot connects to it (startBotOnChat);
 * - `bare`: a plain chat server for the bare tmi.js client.
 * The lines live on the sandboxes' thread: `make` builds a named list of `!enter` lines there,
 * `inject` sends a stretch of one (the sandbox's injectRaw) and answers with that thread's CPU time
 * before the send, `threadCpuUs` reads it again: their difference is the sandbox's share of a span.
 * Requests carry an id and are answered once each (`ChatSandboxReply`), in any order.
 */
import { Worker } from 'node:worker_threads';
import type { ChatEndpoint } from '../src/local/local-stack.js';
import type { BareClientTarget } from './chat-support.js';

export type SandboxName = 'bot' | 'bare';

/** A chat sandbox's public face, sent once at start. */
export type SandboxInfo = ChatEndpoint & Pick<BareClientTarget, 'host' | 'port'>;

export type ChatSandboxRequest = { id: number } & (
  | { op: 'make'; sandbox: SandboxName; list: string; prefix: string; viewers: number; order: Int32Array }
  | { op: 'inject'; sandbox: SandboxName; list: string; from: number; to: number | undefined }
  | { op: 'cpu' }
  | { op: 'until'; sandbox: SandboxName; what: 'joined' | 'connections'; count: number }
  | { op: 'close' }
);

export type ChatSandboxReply = { id: number } & ({ ok: true; cpuUs?: number } | { ok: false; error: string });

export type ChatSandboxStarted =
  { ok: true; sandboxes: Record<SandboxName, SandboxInfo> } | { ok: false; error: string };

/** One chat sandbox on the sandboxes' thread, as the bench drives it. */
export interface RemoteChat extends SandboxInfo, BareClientTarget {
  /**
   * Builds list `list` there: one `!enter` line per entry of `order`, from viewer number `order[i]`
   * of `viewers` distinct viewers named `prefix<n>` (every 5th a subscriber, chat-support's viewers).
   */
  make(list: string, prefix: string, viewers: number, order: Int32Array): Promise<void>;
  /** Sends lines `from` to `to` (exclusive; default all) of `list` in one injectRaw; resolves with the sandboxes' thread CPU (us) just before. */
  inject(list: string, from?: number, to?: number): Promise<number>;
}

export interface ChatSandboxes {
  bot: RemoteChat;
  bare: RemoteChat;
  /** The sandboxes' thread's CPU time so far (user + system, us). */
  threadCpuUs(): Promise<number>;
  /** Closes both sandboxes and ends the thread. */
  close(): Promise<void>;
}

/** Starts the sandboxes' thread and both chat sandboxes on it. */
export async function startChatSandboxes(): Promise<ChatSandboxes> {
  const worker = new Worker(new URL('./support/chat-sandboxes-worker.ts', import.meta.url));
  const started = await new Promise<ChatSandboxStarted>((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
  });
  if (!started.ok) {
    await worker.terminate();
    throw new Error(`bench: the chat sandboxes did not start: ${started.error}`);
  }
  let next = 0;
  const pending = new Map<number, { resolve: (cpuUs: number) => void; reject: (err: Error) => void }>();
  worker.on('message', (reply: ChatSandboxReply) => {
    const p = pending.get(reply.id);
    pending.delete(reply.id);
    if (reply.ok) p?.resolve(reply.cpuUs ?? 0);
    else p?.reject(new Error(`bench: chat sandboxes: ${reply.error}`));
  });
  worker.on('error', (err) => {
    for (const p of pending.values()) p.reject(err);
    pending.clear();
  });
  type Request = ChatSandboxRequest extends infer R ? (R extends { id: number } ? Omit<R, 'id'> : never) : never;
  const ask = (request: Request): Promise<number> =>
    new Promise((resolve, reject) => {
      const id = next++;
      pending.set(id, { resolve, reject });
      worker.postMessage({ id, ...request });
    });
  const remote = (sandbox: SandboxName): RemoteChat => ({
    ...started.sandboxes[sandbox],
    async make(list, prefix, viewers, order) {
      await ask({ op: 'make', sandbox, list, prefix, viewers, order });
    },
    inject: (list, from = 0, to = undefined) => ask({ op: 'inject', sandbox, list, from, to }),
    async untilJoined(count) {
      await ask({ op: 'until', sandbox, what: 'joined', count });
    },
    async untilConnections(count) {
      await ask({ op: 'until', sandbox, what: 'connections', count });
    },
  });
  return {
    bot: remote('bot'),
    bare: remote('bare'),
    threadCpuUs: () => ask({ op: 'cpu' }),
    async close() {
      await ask({ op: 'close' });
      await worker.terminate();
    },
  };
}
