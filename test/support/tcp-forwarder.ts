/**
 * A TCP forwarder to a local port: what `ssh -R` (or any plain TCP tunnel) delivers. It copies
 * bytes both ways and adds no header, so a request through it reaches the target exactly as the
 * remote client wrote it, from a loopback socket address.
 */
import { connect, createServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

export interface TcpForwarder {
  readonly port: number;
  close(): Promise<void>;
}

export async function startTcpForwarder(targetPort: number): Promise<TcpForwarder> {
  const sockets = new Set<Socket>();
  const server = createServer((inbound) => {
    const outbound = connect(targetPort, '127.0.0.1');
    for (const s of [inbound, outbound]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => s.destroy());
    }
    inbound.pipe(outbound);
    outbound.pipe(inbound);
    inbound.on('close', () => outbound.destroy());
    outbound.on('close', () => inbound.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** Opens `count` connections to `port` that never send a byte (an idle-socket flood); destroy them after. */
export async function holdIdleSockets(port: number, count: number): Promise<Socket[]> {
  const idle: Socket[] = [];
  await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<void>((resolve) => {
          const sock = connect(port, '127.0.0.1', () => resolve());
          sock.on('error', () => resolve());
          sock.on('close', () => resolve());
          idle.push(sock);
        }),
    ),
  );
  return idle;
}
