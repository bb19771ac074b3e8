import type { Logger } from 'pino';
import { Agent } from 'undici';
import { systemClock, type Clock } from '../clock.js';
import type { ResolvedExecutor } from '../config/schema.js';
import { ConfigError, CredentialsError } from '../errors.js';
import {
  assertSingleLine,
  NotSentError,
  type ExecutionContext,
  type Executor,
  type ExecutorStats,
} from './executor.js';
import { WebRconConnectError, WebRconConnection } from './webrcon-connection.js';
import { parseFrame } from './webrcon-protocol.js';
import { WebRconRequests } from './webrcon-requests.js';
import { NON_LITERAL_PASSWORD_HINT, webrconAddress, type WebRconAddress } from './webrcon-url.js';

export { WebRconConnectError } from './webrcon-connection.js';

export type WebRconExecutorConfig = Extract<ResolvedExecutor, { type: 'webrcon' }>;

export interface WebRconBackoff {
  /** Delay ceiling of the first retry. */
  readonly initialMs: number;
  /** The ceiling doubles per failed attempt up to this. */
  readonly maxMs: number;
}

export interface WebRconExecutorDeps {
  readonly logger: Logger;
  readonly clock?: Clock;
  /**
   * Default 2 s doubling to 30 s: Rust refuses a new connection from the same address within a
   * cooldown (1 s by default) and bans an address after repeated failures, so no hammering.
   */
  readonly backoff?: WebRconBackoff;
  /** For tests of the jitter; Math.random otherwise. */
  readonly random?: () => number;
  /**
   * Sent right after each delivery command, with its own Identifier (null: do not probe).
   * Rust answers a command only if it printed something, may answer it in several frames, and
   * runs commands in order; the probe's answer therefore marks the end of the command's answer,
   * and a silent command is known to have run instead of timing out as "unknown".
   * Default "server.hostname": a read of a variable every Rust server has, without side effects.
   */
  readonly probeCommand?: string | null;
}

const DEFAULT_BACKOFF: WebRconBackoff = { initialMs: 2000, maxMs: 30_000 };
/** A connection that ends sooner than this after opening counts as a failed attempt (a flapping server). */
const STABLE_CONNECTION_MS = 5000;

interface ReadyWaiter {
  resolve(): void;
  reject(error: Error): void;
}

function backoffDelay(attempt: number, policy: WebRconBackoff, random: () => number): number {
  const ceiling = Math.min(policy.maxMs, policy.initialMs * 2 ** Math.min(Math.max(attempt, 1) - 1, 30));
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}

/**
 * Rust's WebRCON: one WebSocket to `ws://host:port/<password>`, JSON requests matched to their
 * answers by Identifier (so several may be in flight), broadcasts (Identifier 0 / -1) ignored.
 * Reconnects in the background with backoff; a rejected password stops that for good, because
 * retrying cannot fix it and Rust bans an address after a few failures.
 */
export class WebRconExecutor implements Executor {
  readonly kind = 'webrcon' as const;
  readonly #config: WebRconExecutorConfig;
  readonly #address: WebRconAddress;
  readonly #logger: Logger;
  readonly #clock: Clock;
  readonly #random: () => number;
  readonly #backoff: WebRconBackoff;
  readonly #probe: string | null;
  readonly #agent: Agent;
  readonly #lifetime = new AbortController();
  readonly #waiters = new Set<ReadyWaiter>();
  readonly #requests: WebRconRequests;
  #connection: WebRconConnection | undefined;
  #connectedAt = 0;
  #everConnected = false;
  #reconnects = 0;
  #failedAttempts = 0;
  #fatal: CredentialsError | undefined;
  #closed = false;
  #loop: Promise<void> | undefined;
  #attempt: Promise<void> | undefined;

  constructor(config: WebRconExecutorConfig, deps: WebRconExecutorDeps) {
    this.#config = config;
    try {
      this.#address = webrconAddress(config.host, config.port, config.password);
    } catch {
      throw new ConfigError(`servers[].executor.host "${config.host}" is not a valid host name or IP address`);
    }
    this.#logger = deps.logger.child({ executor: 'webrcon', webrcon: this.#address.display });
    this.#clock = deps.clock ?? systemClock;
    this.#random = deps.random ?? Math.random;
    this.#backoff = deps.backoff ?? DEFAULT_BACKOFF;
    this.#probe = deps.probeCommand === undefined ? 'server.hostname' : deps.probeCommand;
    this.#agent = new Agent({ connect: { timeout: config.connectTimeoutMs } });
    this.#requests = new WebRconRequests(this.#clock, this.#address.display, (connection) => {
      if (connection !== this.#connection) return;
      this.#logger.warn('no frame from the WebRCON server since the unanswered command was sent; reconnecting');
      connection.terminate();
    });
    if (!this.#address.literal) this.#logger.warn(NON_LITERAL_PASSWORD_HINT);
  }

  isReady(): boolean {
    return !this.#closed && !this.#fatal && this.#connection?.isOpen === true;
  }

  stats(): ExecutorStats {
    return { connected: this.isReady(), reconnects: this.#reconnects };
  }

  /**
   * One connection attempt now (or joins the one under way). Rejects with CredentialsError on a
   * wrong password, WebRconConnectError otherwise; does not retry (waitReady does).
   */
  async connect(signal?: AbortSignal): Promise<void> {
    this.#throwIfUnusable();
    if (this.isReady()) return;
    if (this.#loop) return this.waitReady(signal);
    this.#attempt ??= this.#tryConnect(signal).finally(() => {
      this.#attempt = undefined;
    });
    return this.#attempt;
  }

  /** Resolves once connected, reconnecting with backoff meanwhile; rejects on abort, close or a rejected password. */
  waitReady(signal?: AbortSignal): Promise<void> {
    try {
      this.#throwIfUnusable();
    } catch (error) {
      return Promise.reject(error);
    }
    if (this.isReady()) return Promise.resolve();
    if (signal?.aborted) return Promise.reject(signal.reason);
    this.#ensureReconnecting();
    return new Promise<void>((resolve, reject) => {
      const onAbort = () => {
        this.#waiters.delete(waiter);
        reject(signal?.reason);
      };
      const waiter: ReadyWaiter = {
        resolve: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
        reject: (error) => {
          signal?.removeEventListener('abort', onAbort);
          reject(error);
        },
      };
      this.#waiters.add(waiter);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Runs a delivery command; the answer is every frame Rust sent for it, joined by newlines. */
  execute(command: string, context: ExecutionContext, signal?: AbortSignal): Promise<string> {
    this.#logger.debug({ commandId: context.id, serverId: context.serverId }, 'sending command over WebRCON');
    return this.#request(command, this.#probe, signal);
  }

  /** Runs a read such as `playerlist` and returns the Message of its first answer as Rust sent it. */
  query(command: string, signal?: AbortSignal): Promise<string> {
    return this.#request(command, null, signal);
  }

  /** Stops reconnecting, closes the connection and settles every waiter and request; leaves no timers behind. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#lifetime.abort(new WebRconConnectError(`the WebRCON session to ${this.#address.display} was closed`));
    this.#rejectWaiters(new WebRconConnectError(`the WebRCON session to ${this.#address.display} was closed before it was ready`));
    const connection = this.#connection;
    this.#connection = undefined;
    await connection?.close();
    await Promise.allSettled([this.#loop, this.#attempt]);
    await this.#agent.destroy().catch(() => undefined);
  }

  async #request(command: string, probe: string | null, signal?: AbortSignal): Promise<string> {
    assertSingleLine(command);
    this.#throwIfUnusable();
    if (signal?.aborted) throw new NotSentError('the command was cancelled before it was sent over WebRCON; it was not sent');
    const connection = this.#connection;
    if (!connection?.isOpen) {
      this.#ensureReconnecting();
      throw new NotSentError(`Rust WebRCON at ${this.#address.display} is not connected (porter is reconnecting); the command was not sent`);
    }
    return this.#requests.send(connection, command, {
      probe,
      timeoutMs: this.#config.timeoutMs,
      ...(signal === undefined ? {} : { signal }),
    });
  }

  #onFrame(connection: WebRconConnection, text: string): void {
    const frame = parseFrame(text);
    if (frame && this.#requests.take(connection, frame)) return;
    // Console output, chat, answers to requests already settled: not ours to act on.
    this.#logger.trace({ identifier: frame?.identifier, type: frame?.type }, 'WebRCON frame ignored');
  }

  #throwIfUnusable(): void {
    if (this.#fatal) throw this.#fatal;
    if (this.#closed) throw new NotSentError(`the WebRCON session to ${this.#address.display} is closed; the command was not sent`);
  }

  async #tryConnect(signal: AbortSignal | undefined): Promise<void> {
    const combined = signal ? AbortSignal.any([signal, this.#lifetime.signal]) : this.#lifetime.signal;
    let connection: WebRconConnection;
    try {
      connection = await WebRconConnection.open({
        address: this.#address,
        connectTimeoutMs: this.#config.connectTimeoutMs,
        dispatcher: this.#agent,
        clock: this.#clock,
        signal: combined,
      });
    } catch (error) {
      if (error instanceof CredentialsError) this.#setFatal(error);
      throw error;
    }
    if (this.#closed) {
      connection.terminate();
      throw new WebRconConnectError(`the WebRCON session to ${this.#address.display} was closed`);
    }
    this.#connection = connection;
    this.#connectedAt = this.#clock.now();
    connection.onFrame((text) => this.#onFrame(connection, text));
    connection.onEnd((reason) => this.#onConnectionEnd(connection, reason));
    if (this.#everConnected) {
      this.#reconnects += 1;
      this.#logger.info({ reconnects: this.#reconnects }, 'Rust WebRCON reconnected');
    } else {
      this.#everConnected = true;
      this.#logger.info('Rust WebRCON connected');
    }
    for (const waiter of this.#waiters) waiter.resolve();
    this.#waiters.clear();
  }

  #onConnectionEnd(connection: WebRconConnection, reason: string): void {
    this.#requests.connectionEnded(connection, reason);
    if (this.#connection !== connection) return;
    this.#connection = undefined;
    if (this.#closed) return;
    const livedMs = this.#clock.now() - this.#connectedAt;
    if (livedMs >= STABLE_CONNECTION_MS) this.#failedAttempts = 0;
    else this.#failedAttempts += 1;
    this.#logger.warn({ reason }, 'Rust WebRCON connection lost; reconnecting');
    this.#ensureReconnecting();
  }

  #ensureReconnecting(): void {
    if (this.#loop || this.#closed || this.#fatal || this.isReady()) return;
    this.#loop = this.#reconnectLoop().finally(() => {
      this.#loop = undefined;
    });
  }

  async #reconnectLoop(): Promise<void> {
    const signal = this.#lifetime.signal;
    while (!this.#closed && !this.#fatal && !this.isReady()) {
      if (this.#failedAttempts > 0) {
        try {
          await this.#clock.sleep(backoffDelay(this.#failedAttempts, this.#backoff, this.#random), signal);
        } catch {
          return;
        }
      }
      try {
        await (this.#attempt ?? this.#tryConnect(undefined));
        return;
      } catch (error) {
        if (error instanceof CredentialsError || this.#closed) return;
        this.#failedAttempts += 1;
        // 1, 2, 4, 8…: a long outage stays visible without a line every few seconds.
        const level = (this.#failedAttempts & (this.#failedAttempts - 1)) === 0 ? 'warn' : 'debug';
        this.#logger[level]({ attempt: this.#failedAttempts, reason: (error as Error).message }, 'Rust WebRCON reconnect failed; retrying with backoff');
      }
    }
  }

  #setFatal(error: CredentialsError): void {
    this.#fatal = error;
    this.#logger.error({ code: error.code }, 'Rust WebRCON password rejected; not reconnecting until the configuration is fixed');
    this.#rejectWaiters(error);
  }

  #rejectWaiters(error: Error): void {
    for (const waiter of this.#waiters) waiter.reject(error);
    this.#waiters.clear();
  }
}
