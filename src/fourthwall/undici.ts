/**
 * undici, loaded on the first HTTP call instead of at start-up: it is the largest module the bot
 * loads, and nothing before readiness (the HTTP server answering /healthz) needs it. One shared
 * import promise; callers await it right before their first request.
 */
import type * as UndiciModule from 'undici';

export type Undici = typeof UndiciModule;

let loading: Promise<Undici> | undefined;

export function undici(): Promise<Undici> {
  return (loading ??= import('undici'));
}
