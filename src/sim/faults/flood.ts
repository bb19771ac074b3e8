import type { Socket } from 'node:net';

/**
 * Writes `chunk` to `socket` without end until the client drops the connection: a broken or
 * hostile server. Written as fast as the client reads, never faster (it waits for 'drain'), so
 * the flood costs the simulator no memory; `written` counts each chunk's bytes.
 */
export async function flood(socket: Socket, chunk: Buffer | string, written: (bytes: number) => void): Promise<void> {
  const gone = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  while (!socket.destroyed && socket.writable) {
    written(chunk.length);
    if (!socket.write(chunk)) await Promise.race([new Promise<void>((resolve) => socket.once('drain', () => resolve())), gone]);
  }
}
