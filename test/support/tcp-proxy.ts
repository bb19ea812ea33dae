/**
 * A TCP proxy in front of PostgreSQL (or any server) that a test can cut and restore:
 * `cut()` drops every open connection and refuses new ones, as a stopped database
 * does; `restore()` accepts again on the same port.
 */
import { createConnection, createServer, Server, Socket } from 'node:net';

export interface TcpProxy {
  /** host:port to connect to instead of the target. */
  address: string;
  cut(): Promise<void>;
  restore(): Promise<void>;
  close(): Promise<void>;
}

export async function startTcpProxy(targetHost: string, targetPort: number): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  let port = 0;
  let server: Server | null = null;

  const listen = async () => {
    if (server) return;
    const next = createServer((client) => {
      const upstream = createConnection(targetPort, targetHost);
      for (const socket of [client, upstream]) {
        sockets.add(socket);
        socket.on('close', () => sockets.delete(socket));
        socket.on('error', () => undefined);
      }
      client.pipe(upstream).pipe(client);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
    await new Promise<void>((resolve) => next.listen(port, '127.0.0.1', resolve));
    port = (next.address() as { port: number }).port;
    server = next;
  };
  const stop = async () => {
    const current = server;
    server = null;
    for (const socket of sockets) socket.destroy();
    if (current) await new Promise((resolve) => current.close(resolve));
  };

  await listen();
  return { address: `127.0.0.1:${port}`, cut: stop, restore: listen, close: stop };
}
