/**
 * The sandboxes' thread of bench/chat-sandboxes.ts (its header has the protocol): starts the bot's
 * chat sandbox (startLocalChat, the bot a moderator) and a plain one for the bare client, holds
 * the named line lists, and answers each request with its id. Reads no environment.
 */
import { parentPort } from 'node:worker_threads';
import { silentLogger } from '../../src/logging/index.js';
import { startLocalChat } from '../../src/local/local-stack.js';
import { startChatServer, type ChatServer, type SimViewer } from '../../src/sandbox/chat/index.js';
import type {
  ChatSandboxReply,
  ChatSandboxRequest,
  ChatSandboxStarted,
  SandboxInfo,
  SandboxName,
} from '../chat-sandboxes.js';
import { flat, viewers } from '../chat-support.js';

const port = parentPort;
if (!port)
  throw new Error('bench/support/chat-sandboxes-worker.ts runs as a worker thread (bench/chat-sandboxes.ts starts it)');

function info(s: ChatServer): SandboxInfo {
  const { url, authUrl, host, port, channel, channelId, botLogin, token, refreshToken, clientId, clientSecret } = s;
  return { url, authUrl, host, port, channel, channelId, botLogin, token, refreshToken, clientId, clientSecret };
}

const cpuUs = (): number => {
  const c = process.threadCpuUsage();
  return c.user + c.system;
};

async function serve(servers: Record<SandboxName, ChatServer>): Promise<void> {
  const lists = new Map<string, string[]>();
  const people = new Map<string, SimViewer[]>();
  const handle = async (r: ChatSandboxRequest): Promise<number | undefined> => {
    switch (r.op) {
      case 'make': {
        const server = servers[r.sandbox];
        const key = `${r.sandbox}:${r.prefix}:${r.viewers}`;
        let vs = people.get(key);
        if (!vs) people.set(key, (vs = viewers(server, r.prefix, r.viewers)));
        const seen = vs;
        lists.set(
          `${r.sandbox}:${r.list}`,
          Array.from(r.order, (i) => flat(server.formatPrivmsg(seen[i]!, '!enter'))),
        );
        return undefined;
      }
      case 'inject': {
        const list = lists.get(`${r.sandbox}:${r.list}`);
        if (!list) throw new Error(`no list ${r.list} on ${r.sandbox}`);
        const before = cpuUs();
        servers[r.sandbox].injectRaw(r.from === 0 && r.to === undefined ? list : list.slice(r.from, r.to));
        return before;
      }
      case 'cpu':
        return cpuUs();
      case 'until': {
        const server = servers[r.sandbox];
        const count = r.what === 'joined' ? () => server.joined().length : () => server.connections();
        await server.waitFor(() => count() === r.count, 5000, `${r.count} ${r.what}`);
        return undefined;
      }
      case 'close':
        await servers.bot.close();
        await servers.bare.close();
        return undefined;
    }
  };
  port!.on('message', (r: ChatSandboxRequest) => {
    handle(r).then(
      (cpu) =>
        port!.postMessage({
          id: r.id,
          ok: true,
          ...(cpu === undefined ? {} : { cpuUs: cpu }),
        } satisfies ChatSandboxReply),
      (err: unknown) =>
        port!.postMessage({
          id: r.id,
          ok: false,
          error: err instanceof Error ? err.message : String(err),
        } satisfies ChatSandboxReply),
    );
  });
}

try {
  const logger = silentLogger();
  const { chatServer: bot } = await startLocalChat({ logger, chat: { botIsMod: true } });
  const bare = await startChatServer({ logger });
  await serve({ bot, bare });
  port.postMessage({ ok: true, sandboxes: { bot: info(bot), bare: info(bare) } } satisfies ChatSandboxStarted);
} catch (err) {
  port.postMessage({ ok: false, error: err instanceof Error ? err.message : String(err) } satisfies ChatSandboxStarted);
}
