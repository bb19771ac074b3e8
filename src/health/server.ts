import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import { isLoopbackHost } from '../config/loopback.js';
import { PorterError } from '../errors.js';
import { listenOn } from '../net/listen.js';
import type { SecretBook } from '../secret-book.js';
import { historyAnswer } from './history-route.js';
import { parseListen } from './listen.js';
import { createMetrics, type PorterMetrics } from './metrics.js';
import type { HealthSource } from './source.js';
import { defaultApiStaleMs, evaluateHealth, type HealthPolicy } from './status.js';

/**
 * The optional HTTP endpoint of `health.listen` (docs/operations.md):
 *   GET /healthz  200 {status:"ok", servers:{...}} or 503 with the reasons per server;
 *   GET /metrics  Prometheus text from porter's own registry;
 *   GET /history  the delivery history as JSON, on a loopback address only.
 * node:http and nothing else: three read-only routes need no framework.
 */

interface HealthServerOptions {
  /** "host:port" from health.listen. */
  readonly listen: string;
  readonly daemon: HealthSource;
  readonly logger: Logger;
  readonly clock: Clock;
  /** The metrics whose observer the daemon was given; without it, /metrics has no delivery counts. */
  readonly metrics?: PorterMetrics;
  /** API staleness bound; default max(3 × poll.idleMs, 60 s) with pollIdleMs, else 60 s. */
  readonly apiStaleMs?: number;
  readonly pollIdleMs?: number;
  /** Secrets to blank out of error texts shown in /healthz and /history (defence in depth: errors should hold none). */
  readonly secrets?: SecretBook;
}

export interface HealthServer {
  readonly port: number;
  readonly host: string;
  close(): Promise<void>;
}

export class HealthListenError extends PorterError {
  override readonly code = 'E_HEALTH_LISTEN';
}

/** The three read-only routes over the daemon, and a 404 or 405 for anything else. */
function healthRoutes(
  options: HealthServerOptions,
  policy: HealthPolicy,
  metrics: PorterMetrics,
  onLoopback: boolean,
): (request: IncomingMessage, response: ServerResponse) => Promise<void> {
  const { clock, daemon } = options;
  const redact = options.secrets?.scrub ?? ((text: string) => text);
  return async function handle(request, response) {
    const [path = '/', search = ''] = (request.url ?? '/').split('?');
    if (path !== '/healthz' && path !== '/metrics' && path !== '/history') {
      return send(
        response,
        404,
        'application/json',
        JSON.stringify({ error: `no such endpoint ${path}: use /healthz, /metrics or /history` }),
      );
    }
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      response.setHeader('Allow', 'GET, HEAD');
      return send(response, 405, 'application/json', JSON.stringify({ error: `${request.method} not allowed: use GET` }));
    }
    if (path === '/healthz') {
      const report = evaluateHealth(daemon, clock.now(), policy, redact);
      return send(
        response,
        report.status === 'unhealthy' ? 503 : 200,
        'application/json',
        JSON.stringify(report),
        request.method === 'HEAD',
      );
    }
    if (path === '/history') {
      const answer = await historyAnswer(daemon, new URLSearchParams(search), { onLoopback, now: clock.now() });
      return send(response, answer.status, 'application/json', redact(answer.body), request.method === 'HEAD');
    }
    const text = await metrics.registry.metrics();
    return send(response, 200, metrics.registry.contentType, text, request.method === 'HEAD');
  };
}

export async function startHealthServer(options: HealthServerOptions): Promise<HealthServer> {
  const { host, port } = parseListen(options.listen);
  const { clock, daemon } = options;
  const logger = options.logger.child({ component: 'health' });
  const policy = {
    startedAt: clock.now(),
    apiStaleMs: options.apiStaleMs ?? defaultApiStaleMs(options.pollIdleMs ?? 0),
  };
  const metrics = options.metrics ?? createMetrics({ clock, servers: daemon.servers.map((p) => p.server) });
  metrics.attach(daemon, policy);
  const onLoopback = isLoopbackHost(host);
  const handle = healthRoutes(options, policy, metrics, onLoopback);

  const server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      logger.error({ event: 'health.failed', err: error }, 'health endpoint failed to answer');
      if (!response.headersSent) send(response, 500, 'application/json', JSON.stringify({ error: 'internal error; see porter log' }));
      else response.destroy();
    });
  });
  // A scraper that stalls must not hold sockets open for the default five minutes.
  server.requestTimeout = 10_000;
  server.headersTimeout = 10_000;
  server.keepAliveTimeout = 5_000;

  const address = await listenOn(
    server,
    port,
    host,
    (error) =>
      new HealthListenError(
        `health.listen ${options.listen}: cannot listen (${error.code ?? error.message}); choose a free port or an address of this host`,
        { cause: error },
      ),
  );
  logger.info(
    { event: 'health.listening', address: address.address, port: address.port },
    `health and metrics endpoint listening (/healthz, /metrics${onLoopback ? ', /history' : ''})`,
  );

  return {
    port: address.port,
    host: address.address,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function send(response: ServerResponse, status: number, type: string, body: string, headOnly = false): void {
  response.writeHead(status, { 'Content-Type': type, 'Content-Length': Buffer.byteLength(body), 'Cache-Control': 'no-store' });
  response.end(headOnly ? undefined : body);
}
