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
 *
 * Answering is not enough: an abstract name (and a pipe name) is visible to every user of the
 * machine, so after a holder died another user could listen under its name and look alive
 * (issue 46). The holder therefore PROVES it is the holder: the prober sends a random challenge
 * line, and the holder answers HMAC-SHA256(secret, challenge), where the secret is the lock's own
 * (written only into the owner-only lock file). `probeEndpoint` says 'alive' only for that proof,
 * 'gone' when nothing listens or whoever listens answers anything else (or closes), 'busy' when no
 * answer comes in time (the caller then asks whether the holder's PID still runs).
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
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
  /**
   * Stops answering (and removes the socket file, where there is one); resolves once the OS has
   * let the endpoint go (a Windows pipe's instances are closed asynchronously). Idempotent.
   */
  close(): Promise<void>;
}

/** Longest challenge line a holder reads. */
const MAX_CHALLENGE = 128;

/** The proof for `challenge` under `secret` (hex). */
function proofOf(secret: string, challenge: string): string {
  return createHmac('sha256', secret).update(`giftdrop lock\n${challenge}`).digest('hex');
}

/**
 * Listens on `endpoint`, answering each connection's challenge line with its proof under
 * `secret`, then closing; never keeps the process alive.
 */
export function holdEndpoint(endpoint: string, secret: string): Promise<HeldEndpoint> {
  return new Promise((resolve, reject) => {
    const server: Server = createServer((socket) => {
      let line = '';
      socket.setTimeout(PROBE_TIMEOUT_MS, () => socket.destroy());
      socket.on('error', () => socket.destroy());
      socket.on('data', (chunk: Buffer) => {
        line += chunk.toString('latin1');
        const nl = line.indexOf('\n');
        if (nl < 0) {
          if (line.length > MAX_CHALLENGE) socket.destroy();
          return;
        }
        socket.end(`${proofOf(secret, line.slice(0, nl))}\n`);
      });
    });
    server.once('error', reject);
    server.listen(endpoint, () => {
      server.unref();
      let closed: Promise<void> | undefined;
      resolve({
        close() {
          closed ??= new Promise<void>((done) => {
            server.close(() => done());
            if (isFile(endpoint)) removeEndpoint(endpoint);
          });
          return closed;
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

/**
 * Who answers on `endpoint`: 'alive' when it proves it knows `secret`, 'gone' when nothing listens
 * or it answers anything else or closes without the proof, 'busy' when nothing comes back in time
 * (or the OS says the endpoint is too busy to accept). Without a secret (a lock written before
 * proofs existed) a connection is taken as 'alive'.
 */
export function probeEndpoint(
  endpoint: string,
  secret: string | undefined,
  timeoutMs = PROBE_TIMEOUT_MS,
): Promise<'alive' | 'gone' | 'busy'> {
  return new Promise((resolve) => {
    const socket = connect(endpoint);
    const challenge = randomBytes(32).toString('hex');
    let answer = '';
    let settled = false;
    const done = (verdict: 'alive' | 'gone' | 'busy') => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(verdict);
    };
    const timer = setTimeout(() => done('busy'), timeoutMs);
    socket.once('connect', () => {
      if (secret === undefined) return done('alive');
      socket.write(`${challenge}\n`);
    });
    socket.on('data', (chunk: Buffer) => {
      answer += chunk.toString('latin1');
      const nl = answer.indexOf('\n');
      if (nl < 0) {
        if (answer.length > 200) done('gone');
        return;
      }
      const got = Buffer.from(answer.slice(0, nl));
      const want = Buffer.from(proofOf(secret!, challenge));
      done(got.length === want.length && timingSafeEqual(got, want) ? 'alive' : 'gone');
    });
    socket.once('end', () => done('gone'));
    socket.once('close', () => done('gone'));
    socket.once('error', (err: NodeJS.ErrnoException) =>
      done(classifyProbeError(err.code) === 'alive' ? 'busy' : 'gone'),
    );
  });
}
