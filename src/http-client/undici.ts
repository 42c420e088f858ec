/**
 * undici, loaded on the first HTTP call instead of at start-up: it is the largest module the bot
 * loads, and nothing before readiness (the HTTP server answering /healthz) needs it. `undici()`
 * is one shared import promise; `LazyPool` is an undici Agent made on its first use (and closed
 * only if it was made), so a client can own or share a connection pool without loading undici in
 * its constructor.
 */
import type * as UndiciModule from 'undici';
import type { Agent, Dispatcher } from 'undici';

export type Undici = typeof UndiciModule;

let loading: Promise<Undici> | undefined;

/** The undici module, imported once, on the first call. */
export function undici(): Promise<Undici> {
  return (loading ??= import('undici'));
}

/** An undici Agent with `options`, created on the first `get()`. */
export class LazyPool {
  private agent: Promise<Dispatcher> | undefined;
  private closed = false;

  constructor(private readonly options: Agent.Options = {}) {}

  /** The pool (created now if it was not yet). */
  get(): Promise<Dispatcher> {
    if (this.closed) return Promise.reject(new Error('connection pool closed'));
    return (this.agent ??= undici().then((u) => new u.Agent(this.options)));
  }

  /** Closes the pool if it was ever created; later `get()` calls reject. */
  async close(): Promise<void> {
    this.closed = true;
    const agent = this.agent;
    if (agent) await (await agent).close().catch(() => undefined);
  }
}
