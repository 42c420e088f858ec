/**
 * The data-folder lock's proof of life (storage/lock.ts): the holder listens on an endpoint named
 * after its lock token, and the OS closes it when the holder dies, however it dies. So a lock whose
 * endpoint does not answer is stale, whatever process now has the holder's PID: PID reuse cannot
 * keep a dead lock alive, on any OS.
 *
 * The endpoint per OS: Windows, the named pipe `\\.\pipe\giftdrop-<token>`; Linux, the abstract
 * Unix socket `giftdrop-<token>` (no file; gone with its process); other POSIX (macOS), a Unix
 * socket file `giftdrop-<token>.sock` in the temp folder, removed on release (a killed holder's
 * file no longer answers, and the next holder removes it). The platform is an argument so each OS's
 * naming is tested on any OS.
 */
import { rmSync } from 'node:fs';
import { createServer, connect, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { posix } from 'node:path';

/** How long a holder may take to answer before it is still taken as alive (busy, not gone). */
const PROBE_TIMEOUT_MS = 2000;

/** The endpoint of the lock whose token is `token` (hex). */
export function lockEndpoint(platform: NodeJS.Platform, token: string, tempDir: string = tmpdir()): string {
  if (platform === 'win32') return `\\\\.\\pipe\\giftdrop-${token}`;
  if (platform === 'linux') return `\0giftdrop-${token}`;
  return posix.join(tempDir, `giftdrop-${token}.sock`); // a POSIX path whatever OS computes it
}

/** True for an endpoint that is a file to remove after use (not a pipe, not an abstract socket). */
function isFile(endpoint: string): boolean {
  return !endpoint.startsWith('\0') && !endpoint.startsWith('\\\\.\\pipe\\');
}

export interface HeldEndpoint {
  /** Stops answering (and removes the socket file, where there is one). Idempotent. */
  close(): void;
}

/** Listens on `endpoint`, answering every connection by closing it; never keeps the process alive. */
export function holdEndpoint(endpoint: string): Promise<HeldEndpoint> {
  return new Promise((resolve, reject) => {
    const server: Server = createServer((socket) => socket.destroy());
    server.once('error', reject);
    server.listen(endpoint, () => {
      server.unref();
      let closed = false;
      resolve({
        close() {
          if (closed) return;
          closed = true;
          server.close();
          if (isFile(endpoint)) removeEndpoint(endpoint);
        },
      });
    });
  });
}

/** Removes a dead holder's socket file, if it left one. */
export function removeEndpoint(endpoint: string): void {
  if (isFile(endpoint)) rmSync(endpoint, { force: true });
}

/**
 * How an endpoint answered a probe: 'gone' when nothing listens there (the holder ended), else
 * 'alive' (it answered, or it is too busy to: a full backlog, all pipe instances taken, no answer in time).
 */
export function classifyProbeError(code: string | undefined): 'gone' | 'alive' {
  return code === 'ENOENT' || code === 'ECONNREFUSED' || code === 'ENOTSOCK' ? 'gone' : 'alive';
}

/** Resolves true while a holder listens on `endpoint` (see classifyProbeError). */
export function endpointAnswers(endpoint: string, timeoutMs = PROBE_TIMEOUT_MS): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(endpoint);
    const done = (alive: boolean) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(alive);
    };
    const timer = setTimeout(() => done(true), timeoutMs);
    socket.once('connect', () => done(true));
    socket.once('error', (err: NodeJS.ErrnoException) => done(classifyProbeError(err.code) === 'alive'));
  });
}
