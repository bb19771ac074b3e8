import { timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { purchaseFrom } from './sim-purchase.js';
import type { SimStore } from './sim-store.js';
import { messageOf } from '../errors.js';

/**
 * The simulated store's checkout, on 127.0.0.1: `POST /purchases` with the sim's token as a bearer
 * token and `{"command": "give {player} diamond 1", "player": "Steve"}` queues a purchase for the
 * sim's server (201 with its id); `GET /purchases` lists what the store has, with each status.
 * `porter sim buy` is a client of this route.
 */

const MAX_BODY = 64 * 1024;

interface PurchaseRoute {
  readonly url: string;
  close(): Promise<void>;
}

export interface QueuedPurchase {
  readonly id: string;
  readonly command: string;
  readonly player: string | undefined;
  readonly offlineExecute: boolean;
}

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)) });
  res.end(text);
}

async function readBody(req: IncomingMessage): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY) return undefined;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function authorized(req: IncomingMessage, token: string): boolean {
  const given = Buffer.from(/^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1] ?? '');
  const expected = Buffer.from(token);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

function parse(body: string): { command?: unknown; player?: unknown; offline?: unknown } | undefined {
  try {
    const value = JSON.parse(body) as unknown;
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

export async function startPurchaseRoute(store: SimStore, onPurchase: (purchase: QueuedPurchase) => void): Promise<PurchaseRoute> {
  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? '/', 'http://sim').pathname;
    if (path !== '/purchases') return send(res, 404, { error: `no route ${path}: use POST /purchases or GET /purchases` });
    if (!authorized(req, store.token)) return send(res, 401, { error: "send the sim's token: Authorization: Bearer <token>" });
    if (req.method === 'GET') {
      const list = store.api.commands().map((c) => ({ id: c.id, command: c.command, player: c.player, status: c.status, error: c.error }));
      return send(res, 200, list);
    }
    if (req.method !== 'POST') return send(res, 405, { error: `${req.method} is not allowed: use POST or GET` });
    const body = await readBody(req);
    if (body === undefined) return send(res, 413, { error: `the body is larger than ${MAX_BODY} bytes` });
    const input = parse(body);
    if (
      !input ||
      typeof input.command !== 'string' ||
      (input.player !== undefined && typeof input.player !== 'string') ||
      (input.offline !== undefined && typeof input.offline !== 'boolean')
    ) {
      return send(res, 400, { error: 'send JSON: {"command": "give {player} diamond 1", "player": "Steve", "offline": false}' });
    }
    const purchase = purchaseFrom({ command: input.command, player: input.player, offline: input.offline });
    if ('refused' in purchase) return send(res, 400, { error: purchase.refused });
    const id = store.api.enqueue(store.serverId, purchase);
    const queued = { id, ...purchase };
    onPurchase(queued);
    send(res, 201, queued);
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) send(res, 500, { error: messageOf(error) });
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/purchases`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
