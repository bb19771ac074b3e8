import { createServer, type AddressInfo } from 'node:net';

/** A loopback port nothing listens on right now, for a listener porter opens itself (health, webhook, a game server started later); the tests use it too. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
