import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A simulated Agones SDK HTTP gateway (tests, not the demo): `GET /gameserver` answers the
 * GameServer, `GET /watch/gameserver` streams `{"result": GameServer}` lines, the current one at
 * once and another at every change, as the real gateway does (grpc-gateway over the SDK's
 * WatchGameServer; googleforgames/agones sdks/swagger/sdk.swagger.json). The GameServer carries
 * proto field names (`object_meta`, `status.state`).
 */
interface FakeAgonesSdk {
  readonly port: number;
  /** Open watch streams. */
  readonly watchers: number;
  /** Requests by path, in arrival order. */
  readonly requests: readonly string[];
  setState(state: string): void;
  /** Ends every open watch stream (the sidecar restarting); porter must come back. */
  dropWatchers(): void;
  close(): Promise<void>;
}

export async function startAgonesSdk(options: { state?: string; port?: number; name?: string } = {}): Promise<FakeAgonesSdk> {
  let state = options.state ?? 'Scheduled';
  const name = options.name ?? 'gameserver-sim';
  const streams = new Set<ServerResponse>();
  const requests: string[] = [];
  const gameServer = () => ({
    object_meta: { name, namespace: 'default', generation: '1' },
    status: { state, address: '127.0.0.1', ports: [] },
  });

  const server = createServer((request, response) => {
    requests.push(request.url ?? '');
    if (request.method !== 'GET') {
      response.writeHead(405).end();
      return;
    }
    if (request.url === '/gameserver') {
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(gameServer()));
      return;
    }
    if (request.url === '/watch/gameserver') {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.write(`${JSON.stringify({ result: gameServer() })}\n`);
      streams.add(response);
      response.on('close', () => streams.delete(response));
      return;
    }
    response.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'Not Found' }));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });

  return {
    port: (server.address() as AddressInfo).port,
    get watchers() {
      return streams.size;
    },
    requests,
    setState(next) {
      state = next;
      for (const stream of streams) stream.write(`${JSON.stringify({ result: gameServer() })}\n`);
    },
    dropWatchers() {
      for (const stream of streams) stream.destroy();
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const stream of streams) stream.destroy();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
