/**
 * Start-up check of the bot's HTTP port, before anything joins chat: a port another program
 * holds is reported in one line that names it and how to pick another, instead of a stack trace
 * after the bot already joined the channel.
 */
import { createServer } from 'node:net';
import { runWithEnv } from '../platform/advice.js';

/** True when `err` (or one of its causes) is EADDRINUSE. */
export function isAddressInUse(err: unknown): boolean {
  for (let e = err, depth = 0; e && depth < 5; depth++) {
    if ((e as { code?: unknown }).code === 'EADDRINUSE') return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}

/** The one line for a busy port, with the fix as `platform`'s shell writes it. */
export function portInUseMessage(host: string, port: number, platform: NodeJS.Platform = process.platform): string {
  return (
    `HTTP_PORT ${port} on ${host} is already in use (another giftdrop, or another program, holds it): ` +
    `stop that one, or pick another port, e.g. ${runWithEnv(platform, { HTTP_PORT: port === 65535 ? port - 1 : port + 1 }, 'npm start')} (and point the Fourthwall webhook or tunnel at it).`
  );
}

/** Resolves with the line saying why the port cannot be listened on, or undefined when it can (0 always can). */
export function checkPortFree(host: string, port: number): Promise<string | undefined> {
  if (port === 0) return Promise.resolve(undefined);
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', (err: NodeJS.ErrnoException) => {
      if (isAddressInUse(err)) resolve(portInUseMessage(host, port));
      else resolve(`cannot listen on HTTP_HOST ${host}, HTTP_PORT ${port} (${err.code ?? err.message}): check both settings.`);
    });
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve(undefined)));
  });
}
