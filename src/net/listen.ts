import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * Starts `server` listening and resolves with the address it got; a failure to listen (a port in
 * use, an address not of this host) rejects with the error `refused` makes of it, which names the
 * setting and what to do.
 */
export async function listenOn(
  server: Pick<Server, 'once' | 'off' | 'listen' | 'address'>,
  port: number,
  host: string,
  refused: (error: NodeJS.ErrnoException) => Error,
): Promise<AddressInfo> {
  await new Promise<void>((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException) => reject(refused(error));
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      resolve();
    });
  });
  return server.address() as AddressInfo;
}
