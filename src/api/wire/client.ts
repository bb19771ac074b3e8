import type { IncomingHttpHeaders } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { Logger } from 'pino';
import type { Dispatcher } from 'undici';
import Pool, { type BarePool } from 'undici/lib/dispatcher/pool.js';
import { startDeadline, systemClock, type Clock } from '../../clock.js';
import type { Config } from '../../config/schema.js';
import type { CallContext } from '../errors.js';
import { createRoutePaths, parseBaseUrl, type RoutePaths } from './routes.js';
import { toTransportError } from './transport.js';
import { BodyTooLargeError } from '../../net/http.js';
import { HttpExchange } from '../../net/http-exchange.js';
import { PullBodyScanner, type OversizedPull } from './pull-scan.js';
import { apiConnectionCap } from '../../net/open-files.js';
import { ConnectionShare } from './connection-share.js';
import { AbortFanout } from '../../abort-fanout.js';
import { SecretBook } from '../../secret-book.js';
import { readSecretAgain } from '../../config/secrets.js';
import { tokenRenewal, type TokenRenewal } from './token.js';
import { porterVersion } from '../../version.js';

export interface ApiRequest {
  readonly method: 'GET' | 'POST';
  /** Full path from RoutePaths (base path included). */
  readonly path: string;
  /** Sent as JSON with Content-Type: application/json; no body when undefined. */
  readonly json?: unknown;
  readonly context: CallContext;
  /** Aborting rejects with the signal's reason, not with an ApiTransportError. */
  readonly signal?: AbortSignal | undefined;
  /**
   * Called once the request has its connection, right before it is written (after every wait);
   * throwing withholds it: the error is the caller's, and nothing was sent. A pull's last word on
   * whether porter may claim now (docs/design.md#lifecycle).
   */
  readonly beforeSend?: (() => void) | undefined;
  /**
   * A pull: an answer over the cap is still read to its end (up to a hard bound), keeping only its
   * id and the command's size (`ApiResponse.oversized`), so that the claim it names can be reported.
   */
  readonly scanOversized?: boolean;
  /** The logger of the server the call is for, which names it (`server`); the client's own otherwise. */
  readonly logger?: Logger | undefined;
}

/** What the rate-limit headers said; undefined where a header was absent or unreadable. */
export interface RateLimitHeaders {
  readonly remaining: number | undefined;
  readonly limit: number | undefined;
  /** `Retry-After` (seconds, or an HTTP date less the answer's `Date`) in whole ms, rounded up. */
  readonly retryAfterMs: number | undefined;
}

/** Every HTTP answer, whatever its status; the body has always been read to the end. */
export interface ApiResponse {
  readonly status: number;
  readonly body: string;
  readonly rateLimit: RateLimitHeaders;
  readonly elapsedMs: number;
  /** Which token the request carried (see TokenRenewal), to renew it after a 401. */
  readonly tokenGeneration: number;
  /** Set (and `body` empty) when a `scanOversized` answer exceeded the cap. */
  readonly oversized?: OversizedPull;
}

export interface ApiClient {
  readonly routes: RoutePaths;
  /** Resolves for every HTTP status; rejects with ApiTransportError when no answer came. */
  send(request: ApiRequest): Promise<ApiResponse>;
  /**
   * Replaces every secret of the client's book (its tokens among them) in any text; for messages built from what the API sent back. A function
   * property, not a method: callers pass it along detached from the client.
   */
  readonly redact: (text: string) => string;
  /** After a 401 to a request sent with `generation`: true when a newer token is there to retry with. */
  renewToken(generation: number): Promise<boolean>;
  /** Sends `token` from now on (a reloaded config). */
  useToken(token: string): void;
  close(): Promise<void>;
}

interface ApiClientDeps {
  readonly logger: Logger;
  /** Runs the per-request deadline (`api.timeoutMs`). Default: system clock. */
  readonly clock?: Clock;
  /** Larger answers are cut off and treated as a transport failure. Default 1 MiB. */
  readonly maxBodyBytes?: number;
  /**
   * Reads the token from its source again after a 401. Default: the file or credential the
   * config's token came from (`api.tokenPath`); a token from the environment or inline is fixed.
   */
  readonly readToken?: () => Promise<string | undefined>;
  /**
   * The connections to send through, shared by the clients of every store at one origin (see
   * createApiOrigin); the client then leaves closing them to their owner. Default: its own.
   */
  readonly origin?: ApiOrigin;
  /** Which store's share of `origin`'s connections this client takes (docs/design.md#many-stores). Default "default". */
  readonly store?: string;
  /** The process's secrets: `redact` scrubs them all, and a token read again after a 401 joins them. Default: a book of this client's own. */
  readonly secrets?: SecretBook;
}

/** How much of an oversized pull answer is read through for its id; past this it is a transport failure. */
const OVERSIZED_SCAN_MAX_BYTES = 256 * 1024 * 1024;

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function nonNegativeInt(text: string | undefined): number | undefined {
  if (text === undefined || !/^\s*\d+\s*$/.test(text)) return undefined;
  return Number.parseInt(text, 10);
}

/** An HTTP date (RFC 9110 §5.6.7: it starts with a day name) in ms since the epoch; undefined if it is not one. */
function httpDate(text: string | undefined): number | undefined {
  const trimmed = text?.trim();
  if (trimmed === undefined || !/^[A-Za-z]{3}/.test(trimmed)) return undefined;
  const date = Date.parse(trimmed);
  return Number.isNaN(date) ? undefined : date;
}

/**
 * `Retry-After` in whole ms, rounded up: delay-seconds, or an HTTP date measured against the
 * answer's own `Date` header (RFC 9110 §10.2.3, §6.6.1), never against porter's wall clock: both
 * dates come from the server's clock, so an API (or a CDN in front of it) minutes ahead or behind
 * still means "2 s" when it says Date + 2 s. A date before `Date` gives 0. A date with no usable
 * `Date` beside it, negative values and garbage are undefined: no usable hint, so the body's
 * `retryAfterSeconds` or a whole budget window decides (src/api/budget/budget.ts), never a guess across
 * two clocks. The budget applies the floor and the clamp.
 */
export function parseRetryAfter(text: string | undefined, dateHeader: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const trimmed = text.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.ceil(Number(trimmed) * 1000);
  const until = httpDate(trimmed);
  const serverNow = httpDate(dateHeader);
  return until === undefined || serverNow === undefined ? undefined : Math.max(0, Math.ceil(until - serverNow));
}

/** One API origin's connections: undici's pool, and the share that hands them out fairly (never more requests than connections). */
export interface ApiOrigin {
  /** What porter uses of a dispatcher: its own handler dispatched, and close. */
  readonly pool: Pick<Dispatcher, 'dispatch' | 'close'>;
  readonly share: ConnectionShare;
}

/**
 * The connections to one API origin. `timeoutMs` is the shortest deadline of the stores that
 * share it: the connect timeout comes from it, each request carries its own store's deadline.
 */
export function createApiOrigin(origin: string, timeoutMs: number): ApiOrigin {
  // Bounded: every connection is a descriptor, and every store and server of this origin shares them.
  const connections = apiConnectionCap();
  return { pool: createPool(origin, timeoutMs, connections), share: new ConnectionShare(connections) };
}

function createPool(origin: string, timeoutMs: number, connections: number): BarePool {
  return new Pool(origin, {
    connections,
    // Off (0): porter's own deadline bounds the whole exchange. undici's run on timers of their
    // own that would win over an answer already waiting in the socket after a freeze
    // (docs/design.md#frozen-and-thawed) and lose the claim it carries.
    headersTimeout: 0,
    bodyTimeout: 0,
    // Shorter than the request deadline so that an unreachable API shows as "not sent".
    connect: { timeout: Math.max(1, Math.min(10_000, Math.floor(timeoutMs / 2))) },
  });
}

/**
 * porter names itself on every request, so a store can tell which connector and which release is
 * calling (and which Node.js and platform, when a release misbehaves only on one of them).
 */
export function userAgent(): string {
  return `porter/${porterVersion()} (node/${process.versions.node}; ${process.platform})`;
}

/** What one exchange needs of its client. */
interface Wire {
  readonly pool: ApiOrigin['pool'];
  readonly share: ConnectionShare;
  readonly store: string;
  readonly clock: Clock;
  readonly timeoutMs: number;
  readonly maxBodyBytes: number;
  readonly token: TokenRenewal;
  readonly redact: (text: string) => string;
  readonly logger: Logger;
  /** Whether a logger writes api.answered lines: porter's log levels are set at start, never changed. */
  readonly debugs: (logger: Logger) => boolean;
  readonly headers: RequestHeaders;
  /** The callers' signals, one listener each for all their calls. */
  readonly aborts: AbortFanout;
}

/**
 * The HTTP side of the Seller API: one undici Pool for the base URL, bearer auth, a per-request
 * deadline of `api.timeoutMs` for the whole exchange (startDeadline on the injected clock, which
 * yields to an answer already arrived), every body read to the end. It knows nothing about budgets or what a status means
 * for a route; server-api.ts does.
 */
export function createApiClient(config: Config['api'], deps: ApiClientDeps): ApiClient {
  const base = parseBaseUrl(config.baseUrl);
  const { tokenPath } = config;
  const readToken =
    deps.readToken ??
    (tokenPath === undefined
      ? undefined
      : () =>
          readSecretAgain(tokenPath, (problem) =>
            deps.logger.error({ event: 'api.token.unusable' }, `the token file read again after a 401 is not used: ${problem}`),
          ));
  const secrets = deps.secrets ?? new SecretBook();
  const token = tokenRenewal(config.token, readToken, secrets);
  const origin = deps.origin ?? createApiOrigin(base.origin, config.timeoutMs);
  const store = deps.store ?? 'default';
  origin.share.join(store);
  const wire: Wire = {
    pool: origin.pool,
    share: origin.share,
    store,
    clock: deps.clock ?? systemClock,
    timeoutMs: config.timeoutMs,
    maxBodyBytes: deps.maxBodyBytes ?? 1024 * 1024,
    token,
    // A fail reason and every API error text pass through it.
    redact: secrets.scrub,
    logger: deps.logger,
    debugs: askedOnce((logger: Logger) => logger.isLevelEnabled('debug')),
    headers: new RequestHeaders(userAgent()),
    aborts: new AbortFanout(),
  };
  return {
    routes: createRoutePaths(config.routes, base),
    send: (request) => sendOnce(wire, request),
    redact: wire.redact,
    renewToken: (generation) => token.renew(generation),
    useToken: (next) => token.use(next),
    close: async () => {
      origin.share.leave(store);
      if (deps.origin === undefined) await origin.pool.close();
    },
  };
}

/**
 * One request, its whole answer or the transport error that says why none came. It waits for a
 * connection of its store's share first (aborting that wait sends nothing); its deadline starts
 * when it is sent.
 */
async function sendOnce(wire: Wire, request: ApiRequest): Promise<ApiResponse> {
  request.signal?.throwIfAborted();
  if (!wire.share.tryTake(wire.store)) await wire.share.take(wire.store, request.signal);
  try {
    request.beforeSend?.();
    return await exchangeOnce(wire, request);
  } finally {
    wire.share.release(wire.store);
  }
}

const startPullScan = () => new PullBodyScanner();

/**
 * The headers every request sends, built once per token and kept until the token changes: undici
 * only reads them, and an idle fleet sends 1,500 requests a second with the same ones.
 */
class RequestHeaders {
  readonly #userAgent: string;
  #token: string | undefined;
  #bare: Readonly<Record<string, string>> = {};
  #json: Readonly<Record<string, string>> = {};

  constructor(userAgent: string) {
    this.#userAgent = userAgent;
  }

  for(token: string, json: boolean): Readonly<Record<string, string>> {
    if (token !== this.#token) {
      this.#token = token;
      this.#bare = Object.freeze({
        authorization: `Bearer ${token}`,
        accept: 'application/json, application/problem+json',
        'user-agent': this.#userAgent,
      });
      this.#json = Object.freeze({ ...this.#bare, 'content-type': 'application/json' });
    }
    return json ? this.#json : this.#bare;
  }
}

/** The exchange itself, on a connection of the store's share. */
async function exchangeOnce(wire: Wire, request: ApiRequest): Promise<ApiResponse> {
  const { clock, timeoutMs, maxBodyBytes } = wire;
  request.signal?.throwIfAborted();
  const exchange = new HttpExchange({
    maxBytes: maxBodyBytes,
    startOverflow: request.scanOversized ? startPullScan : undefined,
    overflowMaxBytes: OVERSIZED_SCAN_MAX_BYTES,
  });
  // Wired by hand, not withDeadline(): that is two AbortControllers and two listeners per call,
  // and an idle fleet makes 1,500 calls a second (docs/benchmarks.md, fleet). Here a deadline
  // is one timer, and the caller's signal an entry in the client's fanout.
  let timedOut = false;
  const cancelDeadline = startDeadline(clock, timeoutMs, () => {
    timedOut = true;
    exchange.abort(new Error(`no answer within ${timeoutMs} ms`));
  });
  const { signal } = request;
  const callerWait = signal && wire.aborts.on(signal, () => exchange.abort(signal.reason as Error));
  const started = performance.now();
  const sentWith = wire.token.current();
  const body = request.json === undefined ? undefined : JSON.stringify(request.json);
  const headers = wire.headers.for(sentWith.token, body !== undefined);
  try {
    wire.pool.dispatch({ method: request.method, path: request.path, headers, body, headersTimeout: 0, bodyTimeout: 0 }, exchange);
    const answer = await exchange.answer;
    const elapsedMs = Math.round(performance.now() - started);
    const log = request.logger ?? wire.logger;
    // Asked once per logger: at info level the line's object would still be built, 1,500 times a
    // second in an idle fleet, and asking a server's child logger each time cost as much again.
    if (wire.debugs(log)) {
      log.debug({ event: 'api.answered', route: request.context.route, status: answer.status, ms: elapsedMs }, 'seller api answered');
    }
    return {
      status: answer.status,
      body: answer.body ?? '',
      ...(answer.body === undefined && exchange.overflow ? { oversized: exchange.overflow.result(maxBodyBytes) } : {}),
      elapsedMs,
      tokenGeneration: sentWith.generation,
      rateLimit: rateLimitOf(answer.headers),
    };
  } catch (error) {
    if (request.signal?.aborted && !timedOut) throw request.signal.reason;
    throw noAnswer(wire, request.context, error, timedOut);
  } finally {
    cancelDeadline();
    callerWait?.end();
  }
}

/** `ask` answered once per object, then remembered (weakly: a retired server's logger is let go). */
function askedOnce<K extends object, V extends NonNullable<unknown>>(ask: (key: K) => V): (key: K) => V {
  const answers = new WeakMap<K, V>();
  return (key) => {
    const known = answers.get(key);
    if (known !== undefined) return known;
    const answer = ask(key);
    answers.set(key, answer);
    return answer;
  };
}

function rateLimitOf(headers: IncomingHttpHeaders): RateLimitHeaders {
  return {
    remaining: nonNegativeInt(header(headers, 'x-ratelimit-remaining')),
    limit: nonNegativeInt(header(headers, 'x-ratelimit-limit')),
    retryAfterMs: parseRetryAfter(header(headers, 'retry-after'), header(headers, 'date')),
  };
}

/** Why no answer came, as the transport error the caller sees. */
function noAnswer(wire: Wire, context: CallContext, error: unknown, timedOut: boolean): Error {
  if (timedOut) {
    return toTransportError(error, context, wire.redact, {
      failure: 'timeout',
      maybeProcessed: true,
      detail: `no answer within ${wire.timeoutMs} ms (api.timeoutMs)`,
    });
  }
  if (error instanceof BodyTooLargeError) {
    return toTransportError(error, context, wire.redact, {
      failure: 'body-too-large',
      maybeProcessed: true,
      detail: `the answer exceeded ${wire.maxBodyBytes} bytes`,
    });
  }
  return toTransportError(error, context, wire.redact);
}
