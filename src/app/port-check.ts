/**
 * Start-up check of the bot's HTTP ports (HTTP_PORT, and GIFTDROP_LOCAL_PORT for the streamer's
 * own pages), before anything joins chat: a port another program holds is reported in one line
 * that names the setting and how to pick another, instead of a stack trace after the bot already
 * joined the channel.
 */
import { createServer } from 'node:net';
import { runWithEnv } from '../platform/advice.js';
import { commandLine, thisInvocation, type Invocation } from '../platform/invocation.js';

/** The EADDRINUSE error among `err` and its causes, if any. */
function addressInUseError(err: unknown): { port?: unknown; message?: unknown } | undefined {
  for (let e = err, depth = 0; e && depth < 5; depth++) {
    if ((e as { code?: unknown }).code === 'EADDRINUSE') return e;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

/** True when `err` (or one of its causes) is EADDRINUSE. */
export function isAddressInUse(err: unknown): boolean {
  return addressInUseError(err) !== undefined;
}

/**
 * The one line for an EADDRINUSE that stopped start-up: the setting whose port was taken (HTTP_PORT
 * or GIFTDROP_LOCAL_PORT, when set to that port), or else the address the error names (a port the
 * OS picked, say), never a setting that was not the cause.
 */
export function addressInUseLine(
  err: unknown,
  http: { host: string; port: number; localBind: string; localPort: number },
): string {
  const taken = addressInUseError(err)?.port;
  if (http.port !== 0 && taken === http.port) return portInUseMessage(http.host, http.port);
  if (http.localPort !== 0 && taken === http.localPort)
    return portInUseMessage(http.localBind, http.localPort, thisInvocation(), 'GIFTDROP_LOCAL_PORT');
  const message = addressInUseError(err)?.message;
  return `could not start: ${typeof message === 'string' ? message : 'an address it listens on is in use'} (another program took it: start again).`;
}

type PortSetting = 'HTTP_PORT' | 'GIFTDROP_LOCAL_PORT';

/**
 * The one line for a busy port, with the fix as `inv`'s shell writes it, naming the command that
 * starts the bot as `inv` runs it (HTTP_PORT's suggestion skips HTTP_PORT + 1, where the
 * streamer's own listener goes by default).
 */
export function portInUseMessage(
  host: string,
  port: number,
  inv: Invocation = thisInvocation(),
  setting: PortSetting = 'HTTP_PORT',
): string {
  const other = setting === 'HTTP_PORT' ? (port >= 65534 ? port - 2 : port + 2) : port === 65535 ? port - 1 : port + 1;
  const after =
    setting === 'HTTP_PORT'
      ? ' (and point the Fourthwall webhook or tunnel at it)'
      : ' (the overlay and dashboard URLs follow it)';
  return (
    `${setting} ${port} on ${host} is already in use (another giftdrop, or another program, holds it): ` +
    `stop that one, or pick another port, e.g. ${runWithEnv(inv.platform, { [setting]: other }, commandLine(inv, 'start'))}${after}.`
  );
}

/** Resolves with the line saying why the port cannot be listened on, or undefined when it can (0 always can). */
export function checkPortFree(
  host: string,
  port: number,
  setting: PortSetting = 'HTTP_PORT',
): Promise<string | undefined> {
  if (port === 0) return Promise.resolve(undefined);
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', (err: NodeJS.ErrnoException) => {
      const hostSetting = setting === 'HTTP_PORT' ? 'HTTP_HOST' : 'GIFTDROP_LOCAL_BIND';
      if (isAddressInUse(err)) resolve(portInUseMessage(host, port, thisInvocation(), setting));
      else
        resolve(
          `cannot listen on ${hostSetting} ${host}, ${setting} ${port} (${err.code ?? err.message}): check both settings.`,
        );
    });
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve(undefined)));
  });
}
