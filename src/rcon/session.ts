import PQueue from 'p-queue';
import type { Logger } from 'pino';
import { systemClock, type Clock } from '../clock.js';
import { CredentialsError } from '../errors.js';
import { NotSentError } from '../executors/executor.js';
import { backoffDelay, DEFAULT_RECONNECT_BACKOFF, type BackoffPolicy } from './backoff.js';
import { RconConnection, type RconConnectionOptions } from './connection.js';
import { RconConnectError } from './errors.js';
import { assertSendable } from './request-limits.js';

export interface RconSessionOptions extends Omit<RconConnectionOptions, 'logger' | 'clock'> {
  /** Deadline for one command's whole answer. */
  readonly timeoutMs: number;
  /** Longest command in UTF-8 bytes (see request-limits.ts). */
  readonly maxRequestBytes: number;
  readonly backoff?: BackoffPolicy;
}

export interface RconSessionDeps {
  readonly logger: Logger;
  readonly clock?: Clock;
  /** For tests of the jitter; Math.random otherwise. */
  readonly random?: () => number;
}

/** A connection that ends sooner than this after login counts as a failed attempt (a flapping server). */
const STABLE_CONNECTION_MS = 5_000;

interface ReadyWaiter {
  resolve(): void;
  reject(error: Error): void;
}

/**
 * One persistent, authenticated connection per game server. Commands go through a p-queue with
 * concurrency 1: one request in flight, because Minecraft closes a connection whose read holds
 * more than one packet and id-0 servers give us no other way to pair answers with requests.
 * When the connection drops it reconnects in the background with backoff; a rejected password
 * stops that for good (retrying cannot fix it and would hammer the server's auth).
 */
export class RconSession {
  readonly #options: RconSessionOptions;
  readonly #logger: Logger;
  readonly #clock: Clock;
  readonly #random: () => number;
  readonly #backoff: BackoffPolicy;
  readonly #queue = new PQueue({ concurrency: 1 });
  readonly #lifetime = new AbortController();
  readonly #waiters = new Set<ReadyWaiter>();
  #connection: RconConnection | undefined;
  #connectedAt = 0;
  #everConnected = false;
  #reconnects = 0;
  #failedAttempts = 0;
  #fatal: CredentialsError | undefined;
  #closed = false;
  #loop: Promise<void> | undefined;
  #attempt: Promise<void> | undefined;

  constructor(options: RconSessionOptions, deps: RconSessionDeps) {
    this.#options = options;
    this.#logger = deps.logger;
    this.#clock = deps.clock ?? systemClock;
    this.#random = deps.random ?? Math.random;
    this.#backoff = options.backoff ?? DEFAULT_RECONNECT_BACKOFF;
  }

  get address(): string {
    return `${this.#options.host}:${this.#options.port}`;
  }

  isReady(): boolean {
    return !this.#closed && !this.#fatal && this.#connection?.state === 'ready';
  }

  stats(): { connected: boolean; reconnects: number } {
    return { connected: this.isReady(), reconnects: this.#reconnects };
  }

  /**
   * One connection attempt now (or joins the one under way). Rejects with CredentialsError on a
   * wrong password, RconConnectError otherwise; does not retry (waitReady does).
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

  /** Resolves once logged in, reconnecting with backoff meanwhile; rejects on abort, close or a rejected password. */
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

  /**
   * Runs one command and returns the whole answer. Refused commands (CR/LF/NUL, too long) reject
   * with CommandRefusedError before anything is queued; while disconnected, NotSentError at once
   * (the delivery loop decides whether to wait); see RconConnection.request for the rest.
   */
  async request(command: string, signal?: AbortSignal): Promise<string> {
    assertSendable(command, this.#options.maxRequestBytes);
    this.#throwIfUnusable();
    return new Promise<string>((resolve, reject) => {
      let started = false;
      let abandoned = false;
      // p-queue's own signal option would free the slot while the request is still on the wire,
      // letting a second one start: so a queued request is abandoned here, a running one is
      // cancelled by the connection (which then destroys itself before the slot frees).
      const onAbort = () => {
        if (started) return;
        abandoned = true;
        reject(new NotSentError('the command was cancelled while waiting for the RCON connection; it was not sent', { cause: signal?.reason }));
      };
      if (signal?.aborted) {
        onAbort();
        return;
      }
      signal?.addEventListener('abort', onAbort, { once: true });
      void this.#queue.add(async () => {
        if (abandoned) return;
        started = true;
        signal?.removeEventListener('abort', onAbort);
        try {
          this.#throwIfUnusable();
          const connection = this.#connection;
          if (!connection || connection.state !== 'ready') {
            this.#ensureReconnecting();
            throw new NotSentError(`RCON at ${this.address} is not connected (porter is reconnecting); the command was not sent`);
          }
          resolve(await connection.request(command, this.#options.timeoutMs, signal));
        } catch (error) {
          reject(error);
        }
      });
    });
  }

  /** Stops reconnecting, drops the connection and settles every waiter; leaves no timers behind. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#lifetime.abort(new RconConnectError(`the RCON session to ${this.address} was closed`));
    this.#connection?.destroy(new Error('porter closed the RCON session'));
    this.#connection = undefined;
    this.#rejectWaiters(new RconConnectError(`the RCON session to ${this.address} was closed before it was ready`));
    await Promise.allSettled([this.#loop, this.#attempt, this.#queue.onIdle()]);
  }

  #throwIfUnusable(): void {
    if (this.#fatal) throw this.#fatal;
    if (this.#closed) throw new NotSentError(`the RCON session to ${this.address} is closed; the command was not sent`);
  }

  async #tryConnect(signal: AbortSignal | undefined): Promise<void> {
    const connection = new RconConnection({ ...this.#options, logger: this.#logger, clock: this.#clock });
    const combined = signal ? AbortSignal.any([signal, this.#lifetime.signal]) : this.#lifetime.signal;
    try {
      await connection.open(combined);
    } catch (error) {
      if (error instanceof CredentialsError) this.#setFatal(error);
      throw error;
    }
    if (this.#closed) {
      connection.destroy();
      throw new RconConnectError(`the RCON session to ${this.address} was closed`);
    }
    this.#connection = connection;
    this.#connectedAt = this.#clock.now();
    if (this.#everConnected) {
      this.#reconnects += 1;
      this.#logger.info({ rcon: this.address, reconnects: this.#reconnects }, 'RCON reconnected and logged in');
    } else {
      this.#everConnected = true;
      this.#logger.info({ rcon: this.address, flavour: this.#options.flavour }, 'RCON connected and logged in');
    }
    connection.onEnd((reason) => this.#onConnectionEnd(connection, reason));
    for (const waiter of this.#waiters) waiter.resolve();
    this.#waiters.clear();
  }

  #onConnectionEnd(connection: RconConnection, reason: Error): void {
    if (this.#connection !== connection) return;
    this.#connection = undefined;
    if (this.#closed) return;
    const livedMs = this.#clock.now() - this.#connectedAt;
    if (livedMs >= STABLE_CONNECTION_MS) this.#failedAttempts = 0;
    else this.#failedAttempts += 1;
    this.#logger.warn({ rcon: this.address, reason: reason.message }, 'RCON connection lost; reconnecting');
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
        const delayMs = backoffDelay(this.#failedAttempts, this.#backoff, this.#random);
        try {
          await this.#clock.sleep(delayMs, signal);
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
        this.#logger[level]({ rcon: this.address, attempt: this.#failedAttempts, reason: (error as Error).message }, 'RCON reconnect failed; retrying with backoff');
      }
    }
  }

  #setFatal(error: CredentialsError): void {
    this.#fatal = error;
    this.#logger.error({ rcon: this.address, code: error.code }, 'RCON password rejected; not reconnecting until the configuration is fixed');
    this.#rejectWaiters(error);
  }

  #rejectWaiters(error: Error): void {
    for (const waiter of this.#waiters) waiter.reject(error);
    this.#waiters.clear();
  }
}
