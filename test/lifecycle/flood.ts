import { connect, type Socket } from 'node:net';

/**
 * A flood of a webhook listener from one address, as a reverse proxy in front of porter would
 * forward it: connections that send nothing, and slowloris requests that trickle their headers a
 * byte at a time and never finish. The store's own event must still get through.
 */
export interface Flood {
  /** Connections the listener accepted and has not closed (yet). */
  readonly open: () => number;
  close(): void;
}

export async function startFlood(port: number, counts: { readonly idle: number; readonly slow: number }): Promise<Flood> {
  const sockets = new Set<Socket>();
  const trickles: NodeJS.Timeout[] = [];
  const opened: Array<Promise<void>> = [];
  const add = (slow: boolean) => {
    const socket = connect({ host: '127.0.0.1', port });
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
    opened.push(
      new Promise<void>((resolve) => {
        socket.once('connect', () => resolve());
        socket.once('close', () => resolve());
      }),
    );
    if (!slow) return;
    socket.once('connect', () => {
      socket.write('POST /webhook HTTP/1.1\r\nHost: porter\r\nContent-Type: application/json\r\n');
      const timer = setInterval(() => {
        if (!socket.destroyed) socket.write('X');
      }, 300);
      trickles.push(timer);
    });
  };
  for (let i = 0; i < counts.idle; i++) add(false);
  for (let i = 0; i < counts.slow; i++) add(true);
  await Promise.all(opened);
  return {
    open: () => sockets.size,
    close() {
      for (const timer of trickles) clearInterval(timer);
      for (const socket of sockets) socket.destroy();
      sockets.clear();
    },
  };
}
