/**
 * The HTTP listeners' settings (docs/security.md): HTTP_HOST/HTTP_PORT for the public listener,
 * GIFTDROP_LOCAL_BIND/GIFTDROP_LOCAL_PORT for the streamer's own (default 127.0.0.1 and HTTP_PORT
 * + 1; 0 when HTTP_PORT is 0), GIFTDROP_LOCAL_HOSTS, GIFTDROP_TRUST_PROXY.
 *
 * Contract: `httpProblems(env)` lists what cannot run (one line each, naming the fix): the local
 * port past 65535 or equal to HTTP_PORT, the streamer's listener bound beyond this machine without
 * GIFTDROP_OVERLAY_KEY. `httpSettings(env)` builds the config's `http` from a valid environment.
 */
import type { EnvSettings } from './schema.js';

export interface HttpSettings {
  /** The public listener (HTTP_HOST, HTTP_PORT). */
  host: string;
  port: number;
  /** The streamer's own listener (GIFTDROP_LOCAL_BIND, GIFTDROP_LOCAL_PORT). */
  localBind: string;
  localPort: number;
  /** GIFTDROP_LOCAL_HOSTS (lower case, no ports): more names of this machine for the streamer's own pages. */
  localHosts?: string[];
  /** GIFTDROP_TRUST_PROXY as set (none, cloudflare, ngrok, last-hop, 1-5); unset: none (no header trusted). */
  trustProxy?: string;
}

type HttpEnv = Pick<
  EnvSettings,
  | 'HTTP_HOST'
  | 'HTTP_PORT'
  | 'GIFTDROP_LOCAL_PORT'
  | 'GIFTDROP_LOCAL_BIND'
  | 'GIFTDROP_LOCAL_HOSTS'
  | 'GIFTDROP_TRUST_PROXY'
  | 'GIFTDROP_OVERLAY_KEY'
>;

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1|localhost)$/i;

function localPortOf(env: HttpEnv): number {
  const port = env.HTTP_PORT ?? 8787;
  return env.GIFTDROP_LOCAL_PORT ?? (port === 0 ? 0 : port + 1);
}

export function httpProblems(env: HttpEnv): string[] {
  const problems: string[] = [];
  const port = env.HTTP_PORT ?? 8787;
  const localPort = localPortOf(env);
  if (localPort > 65535)
    problems.push(
      `GIFTDROP_LOCAL_PORT: HTTP_PORT + 1 (${localPort}) is not a port; set GIFTDROP_LOCAL_PORT to a free port for the overlay and dashboard`,
    );
  else if (localPort !== 0 && localPort === port)
    problems.push(
      `GIFTDROP_LOCAL_PORT: must differ from HTTP_PORT (${port}): the overlay and dashboard never share the public port`,
    );
  const bind = env.GIFTDROP_LOCAL_BIND ?? '127.0.0.1';
  if (!LOOPBACK.test(bind) && !env.GIFTDROP_OVERLAY_KEY)
    problems.push(
      `GIFTDROP_LOCAL_BIND: ${bind} serves the overlay beyond this machine, which needs GIFTDROP_OVERLAY_KEY too (16+ letters and digits; OBS on the other PC opens /overlay?key=<key>)`,
    );
  return problems;
}

export function httpSettings(env: HttpEnv): HttpSettings {
  return {
    host: env.HTTP_HOST ?? '127.0.0.1',
    port: env.HTTP_PORT ?? 8787,
    localBind: env.GIFTDROP_LOCAL_BIND ?? '127.0.0.1',
    localPort: localPortOf(env),
    ...(env.GIFTDROP_LOCAL_HOSTS
      ? {
          localHosts: env.GIFTDROP_LOCAL_HOSTS.split(',')
            .map((h) => h.trim().toLowerCase())
            .filter(Boolean),
        }
      : {}),
    ...(env.GIFTDROP_TRUST_PROXY ? { trustProxy: env.GIFTDROP_TRUST_PROXY } : {}),
  };
}
