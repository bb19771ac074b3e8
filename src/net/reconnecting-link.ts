import { linkSignals } from '../abort.js';
import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import { CredentialsError, messageOf, NotSentError } from '../errors.js';
import { backoffDelay, type BackoffPolicy } from './backoff.js';
import { claimFileFor, noteOutOfFiles } from './open-files.js';

/** What a protocol tells the link about its connections; the link never looks inside one. */
export interface LinkTransport<Conn> {
  /**
   * Opens one connection, ready for requests. Rejects with CredentialsError when the server
   * refused our credentials (the link then stops for good), with anything else to be retried.
   */
  open(signal: AbortSignal): Promise<Conn>;
  isOpen(connection: Conn): boolean;
  /**
   * Called once the connection is the link's: subscribe `ended` to its end (and whatever else
   * the protocol listens to). `ended` may be called more than once or for a replaced connection.
   */
  watch(connection: Conn, ended: (reason: string) => void): void;
  /** Drops at once a connection that opened after close(). */
  drop(connection: Conn): void;
  /** Ends the current connection on close(). */
  release(connection: Conn): Promise<void> | void;
}

/**
 * How the link's errors and log lines name it. The log messages are spelled out whole by each
 * protocol, never assembled here: operators and docs/troubleshooting.md find them in the source.
 */
export interface LinkWording {
  /** Subject of the close messages: "the RCON session to 127.0.0.1:25575". */
  readonly subject: string;
  /** Rejects attempts and waiters when the link closes: the protocol's connect error. */
  readonly ConnectError: new (message: string) => Error;
  /** The first successful open: "RCON connected and logged in". */
  readonly connected: string;
  /** Every later one: "RCON reconnected and logged in". */
  readonly reconnected: string;
  /** An open connection ended: "RCON connection lost; reconnecting". */
  readonly lost: string;
  /** A reconnect attempt failed: "RCON reconnect failed; retrying with backoff". */
  readonly retrying: string;
  /** Credentials refused, the link stops: "RCON password rejected; not reconnecting until …". */
  readonly refused: string;
  /** Put on every line (leave out what the logger already carries). */
  readonly fields?: Readonly<Record<string, unknown>>;
  /** Put on the first `connected` line only. */
  readonly connectedFields?: Readonly<Record<string, unknown>>;
}

interface ReconnectingLinkOptions<Conn> {
  readonly transport: LinkTransport<Conn>;
  readonly wording: LinkWording;
  readonly backoff: BackoffPolicy;
  readonly logger: Logger;
  readonly clock: Clock;
  readonly random: () => number;
}

/** A connection that ends sooner than this after opening counts as a failed attempt (a flapping server). */
const STABLE_CONNECTION_MS = 5_000;

interface ReadyWaiter {
  resolve(): void;
  reject(error: Error): void;
}

/**
 * Keeps one connection to a game server usable: a single attempt joined by concurrent callers,
 * waiters released together once open, and a background reconnect with backoff and jitter after
 * a drop. Refused credentials stop it for good, because retrying cannot fix them and game servers
 * ban an address that keeps failing. The protocol on top owns the requests.
 */
export class ReconnectingLink<Conn> {
  readonly #transport: LinkTransport<Conn>;
  readonly #wording: LinkWording;
  readonly #fields: Readonly<Record<string, unknown>>;
  readonly #backoff: BackoffPolicy;
  readonly #logger: Logger;
  readonly #clock: Clock;
  readonly #random: () => number;
  readonly #lifetime = new AbortController();
  readonly #waiters = new Set<ReadyWaiter>();
  #connection: Conn | undefined;
  #connectedAt = 0;
  #everConnected = false;
  #reconnects = 0;
  #failedAttempts = 0;
  #fatal: CredentialsError | undefined;
  #closed = false;
  #loop: Promise<void> | undefined;
  #attempt: Promise<void> | undefined;

  constructor(options: ReconnectingLinkOptions<Conn>) {
    this.#transport = options.transport;
    this.#wording = options.wording;
    this.#fields = options.wording.fields ?? {};
    this.#backoff = options.backoff;
    this.#logger = options.logger;
    this.#clock = options.clock;
    this.#random = options.random;
  }

  /** The current connection, open or not yet known to have ended; undefined while down. */
  get connection(): Conn | undefined {
    return this.#connection;
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Successful opens after the first. */
  get reconnects(): number {
    return this.#reconnects;
  }

  isReady(): boolean {
    return !this.#closed && !this.#fatal && this.#connection !== undefined && this.#transport.isOpen(this.#connection);
  }

  /**
   * One connection attempt now (or joins the one under way). Rejects with CredentialsError on
   * refused credentials, the transport's error otherwise; does not retry (waitReady does).
   */
  async connect(signal?: AbortSignal): Promise<void> {
    this.throwIfUnusable();
    if (this.isReady()) return;
    if (this.#loop) return this.waitReady(signal);
    this.#attempt ??= this.#tryConnect(signal).finally(() => {
      this.#attempt = undefined;
    });
    return this.#attempt;
  }

  /** Resolves once open, reconnecting with backoff meanwhile; rejects on abort, close or refused credentials. */
  waitReady(signal?: AbortSignal): Promise<void> {
    try {
      this.throwIfUnusable();
    } catch (error) {
      return Promise.reject(error);
    }
    if (this.isReady()) return Promise.resolve();
    if (signal?.aborted) return Promise.reject(signal.reason);
    this.ensureReconnecting();
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

  /** The CredentialsError once credentials were refused; NotSentError once closed. */
  throwIfUnusable(): void {
    if (this.#fatal) throw this.#fatal;
    if (this.#closed) throw new NotSentError(`${this.#wording.subject} is closed; the command was not sent`);
  }

  /** Starts the background reconnect unless it runs already or cannot help. */
  ensureReconnecting(): void {
    if (this.#loop || this.#closed || this.#fatal || this.isReady()) return;
    this.#loop = this.#reconnectLoop().finally(() => {
      this.#loop = undefined;
    });
  }

  /** Stops reconnecting, settles every waiter and releases the connection; leaves no timers behind. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const { subject, ConnectError } = this.#wording;
    this.#lifetime.abort(new ConnectError(`${subject} was closed`));
    const connection = this.#connection;
    this.#connection = undefined;
    this.#rejectWaiters(new ConnectError(`${subject} was closed before it was ready`));
    if (connection !== undefined) await this.#transport.release(connection);
    await Promise.allSettled([this.#loop, this.#attempt]);
  }

  async #tryConnect(signal: AbortSignal | undefined): Promise<void> {
    // Once porter ran out of descriptors, a connection must leave the last few for the journal and the API.
    const releaseFile = claimFileFor(this.#wording.subject);
    const combined = linkSignals(signal, this.#lifetime.signal);
    let connection: Conn;
    try {
      connection = await this.#transport.open(combined.signal);
    } catch (error) {
      if (error instanceof CredentialsError) this.#setFatal(error);
      noteOutOfFiles(error);
      throw error;
    } finally {
      releaseFile();
      combined.release();
    }
    if (this.#closed) {
      this.#transport.drop(connection);
      throw new this.#wording.ConnectError(`${this.#wording.subject} was closed`);
    }
    this.#connection = connection;
    this.#connectedAt = this.#clock.now();
    if (this.#everConnected) {
      this.#reconnects += 1;
      this.#logger.info({ event: 'connection.reconnected', ...this.#fields, reconnects: this.#reconnects }, this.#wording.reconnected);
    } else {
      this.#everConnected = true;
      this.#logger.info({ event: 'connection.up', ...this.#fields, ...this.#wording.connectedFields }, this.#wording.connected);
    }
    // After the log line: a transport may report an end at once, and "lost" must follow "connected".
    this.#transport.watch(connection, (reason) => this.#onConnectionEnd(connection, reason));
    for (const waiter of this.#waiters) waiter.resolve();
    this.#waiters.clear();
  }

  #onConnectionEnd(connection: Conn, reason: string): void {
    if (this.#connection !== connection) return;
    this.#connection = undefined;
    if (this.#closed) return;
    const livedMs = this.#clock.now() - this.#connectedAt;
    if (livedMs >= STABLE_CONNECTION_MS) this.#failedAttempts = 0;
    else this.#failedAttempts += 1;
    this.#logger.warn({ event: 'connection.lost', ...this.#fields, reason }, this.#wording.lost);
    this.ensureReconnecting();
  }

  async #reconnectLoop(): Promise<void> {
    const signal = this.#lifetime.signal;
    while (!this.#closed && !this.#fatal && !this.isReady()) {
      // Zero after a stable connection ended: the first reconnect goes at once.
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
        const attempt = this.#failedAttempts;
        const err = messageOf(error);
        // 1, 2, 4, 8…: a long outage stays visible without a line every few seconds.
        if ((attempt & (attempt - 1)) === 0) {
          this.#logger.warn({ event: 'connection.retrying', ...this.#fields, attempt, err }, this.#wording.retrying);
        } else {
          this.#logger.debug({ event: 'connection.retrying', ...this.#fields, attempt, err }, this.#wording.retrying);
        }
      }
    }
  }

  #setFatal(error: CredentialsError): void {
    this.#fatal = error;
    this.#logger.error({ event: 'connection.refused', ...this.#fields, code: error.code }, this.#wording.refused);
    this.#rejectWaiters(error);
  }

  #rejectWaiters(error: Error): void {
    for (const waiter of this.#waiters) waiter.reject(error);
    this.#waiters.clear();
  }
}
