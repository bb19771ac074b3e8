import { randomBytes } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { systemClock, type Clock } from '../clock.js';
import { FixedWindows, windowKey } from './seller-api-limits.js';
import { CommandQueue, type EnqueueInput, type SimCommand } from './seller-api-queue.js';
import { messageOf } from '../errors.js';

export type { EnqueueInput, SimCommand } from './seller-api-queue.js';

/**
 * A simulated Seller API: the executor routes of the Seller API (pull, done, fail) with the
 * defaults of docs/design.md#the-api-contract, and `GET /v1/seller/servers`, over a real HTTP
 * server on 127.0.0.1. Ships with porter for `porter demo` and `porter sim`; tests and benchmarks
 * drive it through the returned handle, and play faults on it through src/sim/faults/.
 */

/** The routes of the API. */
export type SimRoute = 'pull' | 'done' | 'fail' | 'servers';

export const SIM_TOKEN = 'gci_sim_0123456789abcdef';
export const SIM_SERVER_ID = '1b4e28ba-2fa1-11d2-883f-0016d3cca427';
const EXECUTE = 'commands:execute';
const SERVERS_READ = 'servers:read';
const MAX_REASON = 1000;
const MAX_IDENTIFIERS = 4096;
const MAX_REQUEST_BYTES = 1024 * 1024;

export interface SellerApiOptions {
  /** Token → scopes. Default: SIM_TOKEN with commands:execute and servers:read. */
  readonly tokens?: Readonly<Record<string, readonly string[]>>;
  /** Known server ids (or {id, name, type, rcon}). Default: [SIM_SERVER_ID], an RCON server. */
  readonly servers?: ReadonlyArray<
    | string
    | {
        readonly id: string;
        readonly name?: string;
        readonly type?: 'RCON' | 'PLUGIN' | 'SCRIPT';
        readonly rcon?: { readonly host: string; readonly port: number };
      }
  >;
  /** Per server and per route (and per token for GET /servers). Default 120 per 60 s. */
  readonly budget?: { readonly perWindow?: number; readonly windowMs?: number };
  /** First command id; use values above 2^53 to prove ids survive. Default 1. */
  readonly idStart?: bigint;
  /** Send ids as JSON strings instead of numbers. */
  readonly idAsString?: boolean;
  /** A PROCESSING command nobody reports becomes UNCERTAIN after this long. Default: never. */
  readonly processingTimeoutMs?: number;
  /** False answers every authenticated request with 402 PLAN_FEATURE_REQUIRED. Default true. */
  readonly plan?: boolean;
  readonly clock?: Clock;
  /** Default 0 (any free port). */
  readonly port?: number;
}

/** What a pull's handling found out, for its record: the command it claimed, the identifiers it was sent. */
interface Pulled {
  id?: string;
  online?: string[];
}

export interface SimRequest {
  readonly route: SimRoute | 'unknown';
  readonly serverId: string | undefined;
  /** The command of a report; of a pull, the command it claimed (whether or not its answer reached the client). */
  readonly commandId: string | undefined;
  /** Arrival time on the fake's clock. */
  readonly at: number;
  /** What was answered; 0 when the socket was destroyed without an answer. */
  readonly status: number;
  /** The fault src/sim/faults/ played on it, described. */
  readonly fault?: string;
  /** Arrived while a Retry-After given for this route and server was still running. */
  readonly retryAfterViolation?: boolean;
  /** A pull's onlineIdentifiers as the API matched them (trimmed, lowercased), when its body was valid. */
  readonly online?: readonly string[];
}

/**
 * One request that passed the gate (token, plan, scope, server, budget), as the API serves it:
 * src/sim/faults/ serves some otherwise (an answer of its own, a delay, a reset).
 */
export interface ApiExchange {
  readonly route: SimRoute;
  readonly serverId: string | undefined;
  /** Aborted when the API closes. */
  readonly closing: AbortSignal;
  /** What the API answers, the route's work done (a pull claims, a report settles), with the rate-limit headers. */
  handle(): ApiAnswer;
  /** An answer of the caller's own, the route's work not done, with the rate-limit headers. */
  answer(status: number, body: string, contentType: string): ApiAnswer;
  /** A problem+json answer, the route's work not done, with the rate-limit headers. */
  problem(status: number, code: string, detail: string): ApiAnswer;
  /** Records the request (with the fault played on it, described), then sends `answer`. */
  send(answer: ApiAnswer, fault?: string): void;
  /** Records the request unanswered (status 0), then destroys its socket. */
  reset(fault?: string): void;
}

export interface FakeSellerApi {
  /** http://127.0.0.1:PORT, for api.baseUrl. */
  readonly url: string;
  readonly port: number;
  /** Queues a command; returns its id (decimal digits). */
  enqueue(serverId: string, input: EnqueueInput): string;
  /** Every command with its status and report history. */
  commands(): SimCommand[];
  /** Every request in arrival order. */
  readonly requests: readonly SimRequest[];
  /** Requests that arrived at a route of a server while its Retry-After was still running. */
  readonly retryAfterViolations: number;
  /** Successful claims so far. */
  readonly claimedCount: number;
  /** Requests that arrived and have not been answered (or reset) yet. */
  readonly inFlight: number;
  /** TCP connections accepted so far (a client that reads every body reuses its keep-alive sockets). */
  readonly connections: number;
  setPlan(ok: boolean): void;
  /** Adds or changes a token's scopes; null revokes it. */
  setToken(token: string, scopes: readonly string[] | null): void;
  /** Calls left in the current window of a server's route. */
  remaining(serverId: string, route: 'pull' | 'done' | 'fail'): number;
  close(): Promise<void>;
}

type Matched =
  | { route: 'pull'; serverId: string; commandId: undefined }
  | { route: 'done' | 'fail'; serverId: string; commandId: string }
  | { route: 'servers'; serverId: undefined; commandId: undefined };

function match(method: string, pathname: string): Matched | 'method' | undefined {
  const pull = /^\/v1\/seller\/servers\/([^/]+)\/commands\/pull$/.exec(pathname);
  const report = /^\/v1\/seller\/servers\/([^/]+)\/commands\/([^/]+)\/(done|fail)$/.exec(pathname);
  const found: Matched | undefined = pull
    ? { route: 'pull', serverId: decodeURIComponent(pull[1]!), commandId: undefined }
    : report
      ? { route: report[3] as 'done' | 'fail', serverId: decodeURIComponent(report[1]!), commandId: decodeURIComponent(report[2]!) }
      : pathname === '/v1/seller/servers'
        ? { route: 'servers', serverId: undefined, commandId: undefined }
        : undefined;
  if (!found) return undefined;
  const expected = found.route === 'servers' ? 'GET' : 'POST';
  return method === expected ? found : 'method';
}

/** An answer on its way: its headers may still be added to. */
export class ApiAnswer {
  constructor(
    readonly status: number,
    readonly body: string | undefined,
    readonly headers: Record<string, string> = {},
  ) {}
}

function problem(status: number, code: string, detail: string, path: string, extra: Record<string, unknown> = {}): ApiAnswer {
  const body = JSON.stringify({
    type: 'about:blank',
    title: code.toLowerCase().replace(/_/g, ' '),
    status,
    code,
    detail,
    instance: path,
    traceId: randomBytes(8).toString('hex'),
    ...extra,
  });
  return new ApiAnswer(status, body, { 'content-type': 'application/problem+json' });
}

function json(status: number, text: string): ApiAnswer {
  return new ApiAnswer(status, text, { 'content-type': 'application/json' });
}

function isJsonRequest(req: IncomingMessage): boolean {
  return /^application\/(?:[\w.+-]+\+)?json\b/i.test(req.headers['content-type'] ?? '');
}

async function readRequestBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_REQUEST_BYTES) throw new Error('request body too large');
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

export async function startSellerApi(options: SellerApiOptions = {}): Promise<FakeSellerApi> {
  const api = new SellerApiServer(options);
  await api.listen();
  return api;
}

interface ListedServer {
  readonly id: string;
  readonly name: string | undefined;
  readonly type: 'RCON' | 'PLUGIN' | 'SCRIPT';
  readonly rcon: { readonly host: string; readonly port: number } | undefined;
}

/** The simulated API; src/sim/faults/ extends it to play faults in `serve`. */
export class SellerApiServer implements FakeSellerApi {
  protected readonly clock: Clock;
  /** The budget windows, per `windowKey`. */
  protected readonly windows: FixedWindows;
  readonly requests: SimRequest[] = [];
  readonly #options: SellerApiOptions;
  readonly #tokens: Map<string, readonly string[]>;
  readonly #servers: readonly ListedServer[];
  readonly #known: ReadonlySet<string>;
  readonly #queue: CommandQueue;
  /**
   * Aborted when the API closes. Every answer a fault holds back waits on it, dozens at once when a
   * slow store is flooded with calls (the lifecycle test's seeds), so Node's warning at 11
   * listeners would be noise, not a leak: each wait removes its listener when it ends.
   */
  readonly #lifetime = lifetime();
  readonly #server: Server;
  #plan: boolean;
  #violations = 0;
  #inFlight = 0;
  #connections = 0;
  #port = 0;

  constructor(options: SellerApiOptions) {
    this.#options = options;
    this.clock = options.clock ?? systemClock;
    this.#tokens = new Map(Object.entries(options.tokens ?? { [SIM_TOKEN]: [EXECUTE, SERVERS_READ] }));
    this.#servers = (options.servers ?? [SIM_SERVER_ID]).map((s) =>
      typeof s === 'string'
        ? { id: s, name: undefined, type: 'RCON' as const, rcon: undefined }
        : { name: undefined, type: 'RCON' as const, rcon: undefined, ...s },
    );
    this.#known = new Set(this.#servers.map((s) => s.id));
    this.windows = new FixedWindows(options.budget?.perWindow ?? 120, options.budget?.windowMs ?? 60_000);
    this.#queue = new CommandQueue(options.idStart ?? 1n, options.processingTimeoutMs);
    this.#plan = options.plan ?? true;
    this.#server = createServer((req, res) => {
      this.#inFlight++;
      this.#handle(req, res)
        .catch((error: unknown) => {
          if (!res.headersSent && !res.destroyed) send(res, problem(500, 'INTERNAL_ERROR', messageOf(error), req.url ?? ''));
        })
        .finally(() => {
          this.#inFlight--;
        });
    });
    this.#server.on('connection', () => {
      this.#connections++;
    });
  }

  async listen(): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      this.#server.once('error', reject);
      this.#server.listen(this.#options.port ?? 0, '127.0.0.1', () => {
        this.#server.off('error', reject);
        resolve();
      });
    });
    this.#port = (this.#server.address() as AddressInfo).port;
  }

  get url(): string {
    return `http://127.0.0.1:${this.#port}`;
  }

  get port(): number {
    return this.#port;
  }

  enqueue(serverId: string, input: EnqueueInput): string {
    if (!this.#known.has(serverId)) throw new Error(`fake Seller API: unknown server ${serverId}; pass it in options.servers`);
    return this.#queue.enqueue(serverId, input, this.clock.now());
  }

  commands(): SimCommand[] {
    return this.#queue.list(this.clock.now());
  }

  get retryAfterViolations(): number {
    return this.#violations;
  }

  get claimedCount(): number {
    return this.#queue.claimedCount;
  }

  get inFlight(): number {
    return this.#inFlight;
  }

  get connections(): number {
    return this.#connections;
  }

  setPlan(ok: boolean): void {
    this.#plan = ok;
  }

  setToken(token: string, scopes: readonly string[] | null): void {
    if (scopes === null) this.#tokens.delete(token);
    else this.#tokens.set(token, scopes);
  }

  remaining(serverId: string, route: 'pull' | 'done' | 'fail'): number {
    return this.windows.remaining(windowKey(serverId, route), this.clock.now());
  }

  async close(): Promise<void> {
    this.#lifetime.abort();
    await new Promise<void>((resolve) => {
      this.#server.close(() => resolve());
      this.#server.closeAllConnections();
    });
  }

  /** Serves a request past the gate as the API does: the route's work and its answer. */
  protected serve(exchange: ApiExchange): Promise<void> {
    exchange.send(exchange.handle());
    return Promise.resolve();
  }

  #idLiteral(id: string): string {
    return this.#options.idAsString ? JSON.stringify(id) : id;
  }

  #handlePull(serverId: string, body: string, req: IncomingMessage, path: string, pulled: Pulled): ApiAnswer {
    if (!isJsonRequest(req)) return problem(415, 'UNSUPPORTED_MEDIA_TYPE', 'send the body as application/json', path);
    let identifiers: unknown;
    try {
      identifiers = (JSON.parse(body) as { onlineIdentifiers?: unknown }).onlineIdentifiers;
    } catch {
      return problem(400, 'VALIDATION_ERROR', 'the body is not valid JSON', path);
    }
    if (!Array.isArray(identifiers) || identifiers.some((i) => typeof i !== 'string')) {
      return problem(400, 'VALIDATION_ERROR', 'onlineIdentifiers must be an array of strings', path, {
        errors: [{ code: 'NotNull', field: 'onlineIdentifiers', message: 'must be an array of strings' }],
      });
    }
    const online = new Set((identifiers as string[]).map((i) => i.trim().toLowerCase()).filter((i) => i.length > 0));
    if (online.size > MAX_IDENTIFIERS) {
      return problem(400, 'VALIDATION_ERROR', `at most ${MAX_IDENTIFIERS} onlineIdentifiers`, path, {
        errors: [{ code: 'Size', field: 'onlineIdentifiers', message: `size must be at most ${MAX_IDENTIFIERS}` }],
      });
    }
    pulled.online = [...online];
    const outcome = this.#queue.pull(serverId, online, this.clock.now());
    if (outcome.kind !== 'claimed') return new ApiAnswer(204, undefined);
    pulled.id = outcome.id;
    return json(200, `{"id":${this.#idLiteral(outcome.id)},"command":${JSON.stringify(outcome.command) ?? 'null'}}`);
  }

  #handleReport(route: 'done' | 'fail', serverId: string, id: string, body: string, req: IncomingMessage, path: string): ApiAnswer {
    let error: string | undefined;
    if (route === 'fail') {
      if (!isJsonRequest(req)) return problem(415, 'UNSUPPORTED_MEDIA_TYPE', 'send the body as application/json', path);
      try {
        error = (JSON.parse(body) as { error?: unknown }).error as string | undefined;
      } catch {
        return problem(400, 'VALIDATION_ERROR', 'the body is not valid JSON', path);
      }
      if (typeof error !== 'string') return problem(400, 'VALIDATION_ERROR', 'error must be a string', path);
      if (Array.from(error).length > MAX_REASON) {
        return problem(400, 'VALIDATION_ERROR', `error is longer than ${MAX_REASON} characters`, path, {
          errors: [{ code: 'Size', field: 'error', message: `size must be at most ${MAX_REASON}` }],
        });
      }
    }
    const status = this.#queue.report(serverId, id, route, error, this.clock.now());
    if (status === 404) return problem(404, 'COMMAND_NOT_FOUND', `command ${id} does not exist for this server`, path);
    if (status === 409) return problem(409, 'COMMAND_NOT_PROCESSING', `command ${id} is not PROCESSING`, path);
    return json(200, `{"id":${this.#idLiteral(id)},"status":"${route === 'done' ? 'EXECUTED' : 'FAILED'}"}`);
  }

  #listServers(): ApiAnswer {
    return json(
      200,
      JSON.stringify(
        this.#servers.map((s) => ({
          id: s.id,
          name: s.name ?? `server ${s.id.slice(0, 8)}`,
          type: s.type,
          createdAt: '2024-01-01T00:00:00Z',
          // Seller API 2.6: rcon {host, port} only for RCON servers, never the password.
          ...(s.type === 'RCON' && { rcon: s.rcon ?? { host: '127.0.0.1', port: 25575 } }),
        })),
      ),
    );
  }

  /** Authentication, plan, scope, server, rate limit: the order a real API gateway would check. */
  #gate(
    found: Matched,
    req: IncomingMessage,
    path: string,
    at: number,
    record: { violation: boolean },
  ): ApiAnswer | { limitHeaders: Record<string, string> } {
    const auth = req.headers.authorization ?? '';
    const token = /^Bearer (.+)$/.exec(auth)?.[1];
    const scopes = token === undefined ? undefined : this.#tokens.get(token);
    if (!scopes) return problem(401, 'INVALID_INTEGRATION_TOKEN', 'the integration token is missing, wrong or was regenerated', path);
    if (!this.#plan) return problem(402, 'PLAN_FEATURE_REQUIRED', "the store's plan does not include API access", path);
    const needed = found.route === 'servers' ? SERVERS_READ : EXECUTE;
    if (!scopes.includes(needed)) {
      return problem(403, 'INTEGRATION_SCOPE_MISSING', `the token lacks the scope ${needed}`, path, { requiredScope: [needed] });
    }
    if (found.serverId !== undefined && !this.#known.has(found.serverId)) {
      return problem(404, 'SERVER_NOT_FOUND', `server ${found.serverId} does not exist in this store`, path);
    }
    const key = found.route === 'servers' ? `token:${token}|servers` : windowKey(found.serverId, found.route);
    if (this.windows.isEarly(key, at)) {
      record.violation = true;
      this.#violations++;
    }
    const check = this.windows.check(key, at);
    const limitHeaders = { 'x-ratelimit-limit': String(check.limit), 'x-ratelimit-remaining': String(check.remaining) };
    if (!check.allowed) {
      const answer = problem(429, 'RATE_LIMIT_ERROR', 'route budget reached', path, { retryAfterSeconds: check.retryAfterSeconds });
      Object.assign(answer.headers, limitHeaders, { 'retry-after': String(check.retryAfterSeconds) });
      return answer;
    }
    return { limitHeaders };
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const at = this.clock.now();
    const url = new URL(req.url ?? '/', 'http://sim');
    const path = url.pathname;
    let body: string;
    try {
      body = await readRequestBody(req);
    } catch {
      send(res, problem(413, 'PAYLOAD_TOO_LARGE', 'request body too large', path));
      return;
    }
    const found = match(req.method ?? 'GET', path);
    if (found === undefined || found === 'method') {
      const answer =
        found === 'method'
          ? problem(405, 'METHOD_NOT_ALLOWED', `${req.method} is not allowed here`, path)
          : problem(404, 'NOT_FOUND', `no route ${path}`, path);
      this.requests.push({ route: 'unknown', serverId: undefined, commandId: undefined, at, status: answer.status });
      send(res, answer);
      return;
    }
    const record = { violation: false };
    const pulled: Pulled = {};
    const finish = (status: number, fault?: string) => {
      this.requests.push({
        route: found.route,
        serverId: found.serverId,
        commandId: found.commandId ?? pulled.id,
        at,
        status,
        ...(fault === undefined ? {} : { fault }),
        ...(record.violation ? { retryAfterViolation: true } : {}),
        ...(pulled.online === undefined ? {} : { online: pulled.online }),
      });
    };

    const gated = this.#gate(found, req, path, at, record);
    if (gated instanceof ApiAnswer) {
      finish(gated.status);
      send(res, gated);
      return;
    }
    const withLimits = (answer: ApiAnswer) => {
      Object.assign(answer.headers, gated.limitHeaders);
      return answer;
    };
    await this.serve({
      route: found.route,
      serverId: found.serverId,
      closing: this.#lifetime.signal,
      handle: () =>
        withLimits(
          found.route === 'pull'
            ? this.#handlePull(found.serverId, body, req, path, pulled)
            : found.route === 'servers'
              ? this.#listServers()
              : this.#handleReport(found.route, found.serverId, found.commandId, body, req, path),
        ),
      answer: (status, text, contentType) => withLimits(new ApiAnswer(status, text, { 'content-type': contentType })),
      problem: (status, code, detail) => withLimits(problem(status, code, detail, path)),
      send: (answer, fault) => {
        finish(answer.status, fault);
        send(res, answer);
      },
      reset: (fault) => {
        finish(0, fault);
        req.socket.destroy();
      },
    });
  }
}

function send(res: ServerResponse, answer: ApiAnswer): void {
  if (res.destroyed) return;
  res.writeHead(
    answer.status,
    answer.body === undefined ? answer.headers : { ...answer.headers, 'content-length': String(Buffer.byteLength(answer.body)) },
  );
  res.end(answer.body);
}

function lifetime(): AbortController {
  const controller = new AbortController();
  setMaxListeners(0, controller.signal);
  return controller;
}
