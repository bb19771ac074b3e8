import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import { LISTEN_FORM, parseListenAddress } from '../config/listen-address.js';
import { ConfigError, messageOf } from '../errors.js';
import { listenOn } from '../net/listen.js';
import { readBody } from './body.js';
import { shedAtCap } from './connection-shed.js';
import { readEventFacts } from './event.js';
import { headerOf } from './headers.js';
import type { WebhookOutcome } from './outcome.js';
import { ReplayMemory } from './replay-memory.js';
import { routeOf } from './route.js';
import { checkHeaders, type WebhookScheme } from './scheme.js';
import { readTls, WebhookListenError, type TlsFiles } from './tls.js';

/**
 * The webhook listener of `webhook.listen` (docs/design.md#webhook-wake-ups). It faces the
 * internet (the store calls only public addresses), so everything a client controls is bounded:
 * header and body time, body size, connections, keep-alive. A request is verified against its
 * raw bytes before anything of the body is parsed; only a verified `order.payment_approved` not
 * seen before wakes the store's servers, and a wake-up is only a hint: the loops pull inside
 * their budgets however many arrive.
 */

/** The only event that makes a purchase pullable. */
const WAKING_TYPE = 'order.payment_approved';

interface WebhookLimits {
  /** A request's whole body must arrive within this, counted from its headers. */
  readonly bodyDeadlineMs: number;
  readonly headersTimeoutMs: number;
  readonly requestTimeoutMs: number;
  readonly keepAliveTimeoutMs: number;
  readonly maxConnections: number;
  readonly maxRequestsPerSocket: number;
}

/** The store waits 10 s for an answer (Seller API 6.4); an honest sender's 64 KiB takes a fraction of that. */
const DEFAULT_WEBHOOK_LIMITS: WebhookLimits = {
  bodyDeadlineMs: 5_000,
  headersTimeoutMs: 5_000,
  requestTimeoutMs: 10_000,
  keepAliveTimeoutMs: 5_000,
  maxConnections: 128,
  maxRequestsPerSocket: 100,
};

interface WebhookServerOptions {
  /** "host:port" from webhook.listen. */
  readonly listen: string;
  readonly tls?: TlsFiles | undefined;
  readonly toleranceS: number;
  readonly maxBodyBytes: number;
  readonly scheme: WebhookScheme;
  /** The signing keys of a store (undefined: the default store); undefined when there is no such store (404). */
  readonly secretsFor: (store: string | undefined) => readonly Uint8Array[] | undefined;
  /** Wakes a store's servers to pull now; they pull inside their budgets. */
  readonly wake: (store: string | undefined) => void;
  readonly onOutcome?: (outcome: WebhookOutcome) => void;
  readonly logger: Logger;
  readonly clock: Clock;
  readonly limits?: Partial<WebhookLimits>;
}

export interface WebhookServer {
  readonly port: number;
  readonly host: string;
  /** Reads the certificate and key again (SIGHUP); a file that cannot be read leaves the running ones in use. */
  reloadTls(): Promise<void>;
  close(): Promise<void>;
}

const REFUSED: Record<string, { status: number; outcome: WebhookOutcome; error: string }> = {
  signature: { status: 401, outcome: 'refused_signature', error: 'missing or wrong signature' },
  timestamp: { status: 401, outcome: 'refused_timestamp', error: 'timestamp outside the tolerance' },
  'too-large': { status: 413, outcome: 'refused_too_large', error: 'body too large' },
  timeout: { status: 408, outcome: 'refused_timeout', error: 'body not received in time' },
  'not-found': { status: 404, outcome: 'refused_not_found', error: 'no such webhook: POST /webhook or /webhook/<store>' },
  method: { status: 405, outcome: 'refused_method', error: 'use POST' },
};

function refuse(response: ServerResponse, why: keyof typeof REFUSED): WebhookOutcome {
  const { status, error } = REFUSED[why]!;
  // The body may be unread: the connection is not reused.
  send(response, status, JSON.stringify({ error }), { Connection: 'close', ...(status === 405 && { Allow: 'POST' }) });
  return REFUSED[why]!.outcome;
}

/**
 * What the listener does with one request: route, method, size, body, signature, then (answered
 * 204 once verified) replay, event type and the wake. Undefined when the sender went away.
 */
function webhookHandler(
  options: WebhookServerOptions,
  limits: WebhookLimits,
): (request: IncomingMessage, response: ServerResponse) => Promise<WebhookOutcome | undefined> {
  const { clock } = options;
  // A Standard Webhooks id is refused as stale once its timestamp is `toleranceS` old, and it may
  // arrive up to `toleranceS` early: kept twice that, a replay meets the memory or the clock check.
  const memory = new ReplayMemory(2 * options.toleranceS * 1000);

  return async function handle(request, response) {
    const route = routeOf(request.url ?? '/');
    if (!route) return refuse(response, 'not-found');
    if (request.method !== 'POST') return refuse(response, 'method');
    const keys = options.secretsFor(route.store);
    if (keys === undefined || keys.length === 0) return refuse(response, 'not-found');
    const announced = Number(request.headers['content-length'] ?? 0);
    if (announced > options.maxBodyBytes) return refuse(response, 'too-large');

    const read = await readBody(request, options.maxBodyBytes, limits.bodyDeadlineMs, clock);
    if (!read.ok) {
      if (read.reason === 'aborted') return undefined;
      // The rest of the body is not waited for: once the answer is out, the connection goes.
      response.once('finish', () => request.socket.destroy());
      return refuse(response, read.reason);
    }
    const headers = checkHeaders(options.scheme, headerOf(request.headers), clock.now(), options.toleranceS);
    if (!headers.ok) return refuse(response, headers.reason);
    if (!headers.value.matches(read.body, keys)) return refuse(response, 'signature');

    // Verified: whatever follows is answered 2xx, since the store's retry would bring the same bytes.
    send(response, 204);
    const scope = route.store ?? '';
    const now = clock.now();
    const { webhookId } = headers.value;
    if (webhookId !== undefined && memory.seenBefore(`${scope}\0webhook-id`, [webhookId], now)) return 'replayed';
    const facts = readEventFacts(read.body);
    if (!facts) return 'unreadable';
    if (facts.eventId !== undefined && memory.seenBefore(`${scope}\0eventId`, [facts.eventId], now)) return 'replayed';
    if (facts.type !== WAKING_TYPE) return 'ignored_type';
    options.wake(route.store);
    return 'woken';
  };
}

export async function startWebhookServer(options: WebhookServerOptions): Promise<WebhookServer> {
  const address = parseListenAddress(options.listen);
  if (!address) throw new ConfigError(`webhook.listen: expected ${LISTEN_FORM}, got "${options.listen}"`);
  const limits = { ...DEFAULT_WEBHOOK_LIMITS, ...options.limits };
  const logger = options.logger.child({ component: 'webhook' });
  const handle = webhookHandler(options, limits);

  const onRequest = (request: IncomingMessage, response: ServerResponse) => {
    handle(request, response).then(
      (outcome) => {
        if (outcome === undefined) return;
        options.onOutcome?.(outcome);
        if (outcome === 'woken')
          logger.info({ event: 'webhook.woke', store: routeStore(request) }, 'webhook: a payment was approved; pulling now');
        else logger.debug({ event: 'webhook.request', outcome, store: routeStore(request) }, 'webhook request');
      },
      (error: unknown) => {
        logger.error({ event: 'webhook.failed', err: error }, 'webhook listener failed to answer');
        if (!response.headersSent) send(response, 500, JSON.stringify({ error: 'internal error' }), { Connection: 'close' });
        else response.destroy();
      },
    );
  };

  const serverOptions = {
    headersTimeout: limits.headersTimeoutMs,
    requestTimeout: limits.requestTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    // Node checks the two timeouts above only this often (30 s by default).
    connectionsCheckingInterval: Math.min(1_000, limits.headersTimeoutMs),
  };
  const tls = options.tls;
  const server: Server | HttpsServer = tls
    ? createHttpsServer({ ...serverOptions, handshakeTimeout: limits.headersTimeoutMs, ...(await readTls(tls)) }, onRequest)
    : createHttpServer(serverOptions, onRequest);
  // At the cap the connection that sent the least is shed, never the newcomer by default: a flood must not refuse the store.
  shedAtCap(server, limits.maxConnections, shedNotice(logger, options.clock, limits.maxConnections));
  server.maxRequestsPerSocket = limits.maxRequestsPerSocket;
  // headersTimeout already cuts a connection that never completes its headers (counted from the
  // connection); this also bounds any socket idle that long (with no 'timeout' listener node destroys it).
  server.setTimeout(limits.requestTimeoutMs);

  const bound = await listenOn(
    server,
    address.port,
    address.host,
    (error) =>
      new WebhookListenError(
        `webhook.listen ${options.listen}: cannot listen (${error.code ?? error.message}); choose a free port or an address of this host`,
        { cause: error },
      ),
  );
  logger.info(
    { event: 'webhook.listening', address: bound.address, port: bound.port, tls: tls !== undefined },
    'webhook listener ready (POST /webhook, /webhook/<store>): verified payment events wake the servers to pull',
  );

  return {
    port: bound.port,
    host: bound.address,
    async reloadTls() {
      if (!tls) return;
      try {
        (server as HttpsServer).setSecureContext(await readTls(tls));
        logger.info({ event: 'webhook.tls.reloaded' }, 'webhook listener: certificate and key read again');
      } catch (error) {
        logger.error({ event: 'webhook.tls.kept', err: messageOf(error) }, 'webhook listener: keeping the running certificate');
      }
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** How often, at most, a flood is logged while it lasts. */
const SHED_LOG_INTERVAL_MS = 60_000;

/** Logs the first connection shed, then at most once a minute with how many were since. */
function shedNotice(logger: Logger, clock: Clock, cap: number): () => void {
  let shed = 0;
  let loggedAt: number | undefined;
  return () => {
    shed++;
    const now = clock.now();
    if (loggedAt !== undefined && now - loggedAt < SHED_LOG_INTERVAL_MS) return;
    logger.warn(
      { event: 'webhook.shed', shed, maxConnections: cap },
      'webhook listener: more connections than it keeps open; closing those that sent the least (idle or incomplete requests) so events still get through',
    );
    loggedAt = now;
    shed = 0;
  };
}

function routeStore(request: IncomingMessage): string | undefined {
  return routeOf(request.url ?? '/')?.store;
}

function send(response: ServerResponse, status: number, body?: string, headers: Record<string, string> = {}): void {
  if (response.headersSent || response.destroyed) return;
  response.writeHead(status, {
    ...(body !== undefined && { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) }),
    'Cache-Control': 'no-store',
    ...headers,
  });
  response.end(body);
}
