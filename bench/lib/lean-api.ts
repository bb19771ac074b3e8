import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A minimal Seller API for the 50,000-command CPU and memory run: pull, done and fail with the
 * same status codes, bodies and rate-limit headers as src/sim/seller-api.ts, but an O(1) queue and
 * no budget. The simulator keeps every command it ever queued and scans them all on each pull, so
 * tens of thousands of commands in, the harness rather than porter would set the pace (measured:
 * 270 deliveries/s at the start, 130/s at 50,000). Here porter is the only bottleneck.
 */

export interface LeanApi {
  readonly url: string;
  enqueue(command: string): void;
  /** Commands queued and not yet claimed. */
  readonly queued: number;
  readonly pulls: number;
  readonly claims: number;
  readonly done: number;
  readonly failed: number;
  /** Reports for a command that was not the one in hand (404/409): must stay 0. */
  readonly unexpectedReports: number;
  readonly firstPullAt: number | undefined;
  close(): Promise<void>;
}

const PULL = /^\/v1\/seller\/servers\/[^/]+\/commands\/pull$/;
const REPORT = /^\/v1\/seller\/servers\/[^/]+\/commands\/([^/]+)\/(done|fail)$/;
const LIMIT = 1_000_000_000;

export async function startLeanApi(token: string): Promise<LeanApi> {
  const queue: string[] = [];
  let head = 0;
  let nextId = 1;
  let inHand: string | undefined;
  const remaining = { pull: LIMIT, done: LIMIT, fail: LIMIT };
  const stats = { pulls: 0, claims: 0, done: 0, failed: 0, unexpectedReports: 0, firstPullAt: undefined as number | undefined };

  function answer(
    res: ServerResponse,
    status: number,
    body: string | undefined,
    route: keyof typeof remaining | undefined,
    type = 'application/json',
  ): void {
    const headers: Record<string, string> = {};
    if (route) {
      remaining[route]--;
      headers['x-ratelimit-limit'] = String(LIMIT);
      headers['x-ratelimit-remaining'] = String(remaining[route]);
    }
    if (body !== undefined) {
      headers['content-type'] = type;
      headers['content-length'] = String(Buffer.byteLength(body));
    }
    res.writeHead(status, headers);
    res.end(body);
  }

  function problem(res: ServerResponse, status: number, code: string, route: keyof typeof remaining | undefined): void {
    answer(
      res,
      status,
      JSON.stringify({ type: 'about:blank', title: code.toLowerCase(), status, code, detail: code }),
      route,
      'application/problem+json',
    );
  }

  function handle(req: IncomingMessage, res: ServerResponse): void {
    if (req.headers.authorization !== `Bearer ${token}`) return problem(res, 401, 'INVALID_INTEGRATION_TOKEN', undefined);
    const path = req.url ?? '/';
    if (req.method === 'POST' && PULL.test(path)) {
      stats.pulls++;
      stats.firstPullAt ??= Date.now();
      if (inHand !== undefined || head === queue.length) return answer(res, 204, undefined, 'pull');
      const command = queue[head]!;
      queue[head++] = '';
      if (head > 4096 && head * 2 > queue.length) {
        queue.splice(0, head);
        head = 0;
      }
      inHand = String(nextId++);
      stats.claims++;
      return answer(res, 200, `{"id":${inHand},"command":${JSON.stringify(command)}}`, 'pull');
    }
    const report = req.method === 'POST' ? REPORT.exec(path) : null;
    if (report) {
      const [, id, route] = report as unknown as [string, string, 'done' | 'fail'];
      if (id !== inHand) {
        stats.unexpectedReports++;
        return problem(res, 409, 'COMMAND_NOT_PROCESSING', route);
      }
      inHand = undefined;
      if (route === 'done') stats.done++;
      else stats.failed++;
      return answer(res, 200, `{"id":${id},"status":"${route === 'done' ? 'EXECUTED' : 'FAILED'}"}`, route);
    }
    return problem(res, 404, 'NOT_FOUND', undefined);
  }

  const server = createServer((req, res) => {
    // Read the whole body before answering, as a real server does.
    req.on('data', () => {});
    req.on('end', () => handle(req, res));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    enqueue(command) {
      queue.push(command);
    },
    get queued() {
      return queue.length - head;
    },
    get pulls() {
      return stats.pulls;
    },
    get claims() {
      return stats.claims;
    },
    get done() {
      return stats.done;
    },
    get failed() {
      return stats.failed;
    },
    get unexpectedReports() {
      return stats.unexpectedReports;
    },
    get firstPullAt() {
      return stats.firstPullAt;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
