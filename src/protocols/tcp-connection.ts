import { connect as netConnect, type Socket } from 'node:net';
import { systemClock, type Clock } from '../clock.js';
import { CredentialsError, messageOf, NotSentError } from '../errors.js';
import { isOutOfFiles, outOfFilesAdvice } from '../net/open-files.js';
import type { LinkTransport } from '../net/reconnecting-link.js';
import { stepWithin, type StepHost } from './step.js';

type TcpConnectionState = 'idle' | 'connecting' | 'authenticating' | 'ready' | 'closed';

/** What every step's handlers have: the connection ended while the step was outstanding. */
interface StepHandlers {
  onEnd(reason: Error): void;
}

export interface TcpEndpoint {
  readonly host: string;
  readonly port: number;
  /** Deadline for the TCP connect. */
  readonly connectTimeoutMs: number;
  readonly clock?: Clock;
}

/** How messages name the connection and the server. */
interface TcpWords {
  /** The connection: "RCON connection", "the telnet connection". */
  readonly name: string;
  /** The server: "RCON", "the 7 Days to Die console". */
  readonly server: string;
}

/** How a protocol opens its connection once the socket is there. */
interface Opening<H extends StepHandlers> {
  /** What the connect step does with what the socket reads before the connect event. */
  readonly meanwhile: Omit<H, 'onEnd'>;
  /** The login, run once connected; rejects with CredentialsError on a refused password. */
  login(socket: Socket, signal: AbortSignal | undefined): Promise<void>;
  /** The error `open` rejects with, from what ended the connect or the login. */
  openError(error: unknown): Error;
}

const KEEPALIVE_DELAY_MS = 15_000;

/**
 * Where every connection's socket reads land (net's `onread`): one buffer for the process, not a
 * fresh 64 KiB allocation and a stream 'data' event per read. Safe because a read is handed to
 * `onData` synchronously and the next read into the buffer happens only after it returns; so
 * `onData` must copy whatever it keeps (both decoders do). An idle fleet reads a thousand
 * answers every two seconds (docs/benchmarks.md, fleet).
 */
const READ_BUFFER = Buffer.allocUnsafe(64 * 1024);

/**
 * The TCP side of a stream console connection (RCON, the 7 Days to Die telnet console): connect
 * with a deadline, a login step, then one outstanding step at a time (stepWithin), each fed what
 * the socket reads through the protocol's handlers `H`. Socket errors, a FIN and a close end the
 * connection, never the process; an ended connection is never used again.
 */
export abstract class TcpConnection<H extends StepHandlers> {
  readonly #endpoint: TcpEndpoint;
  readonly #words: TcpWords;
  readonly #clock: Clock;
  #socket: Socket | undefined;
  #state: TcpConnectionState = 'idle';
  #outstanding: H | undefined;
  #endReason: Error | undefined;
  readonly #endListeners = new Set<(reason: Error) => void>();
  readonly #address: string;
  /** What every step is told about this connection: one object for its life, not one per request. */
  readonly #stepHost: StepHost<H>;
  /** What the running step does when its signal aborts; undefined between steps. */
  #stepAborted: (() => void) | undefined;
  /** The signal the connection listens to for its steps, kept between steps while they share it. */
  #listenedSignal: AbortSignal | undefined;
  readonly #onSignalAbort = () => this.#stepAborted?.();

  constructor(endpoint: TcpEndpoint, words: TcpWords) {
    this.#endpoint = endpoint;
    this.#words = words;
    this.#clock = endpoint.clock ?? systemClock;
    this.#address = `${endpoint.host}:${endpoint.port}`;
    this.#stepHost = {
      clock: this.#clock,
      endReason: () => this.#endReason,
      track: (handlers, signal, onAbort) => {
        this.#outstanding = handlers;
        // A step without a signal must not be cancelled by the one an earlier step left listened to.
        this.#stepAborted = signal ? onAbort : undefined;
        if (signal && signal !== this.#listenedSignal && !this.#endReason) this.#listenTo(signal);
      },
    };
  }

  /** Every chunk the socket reads. The chunk is reused for the next read once this returns: copy what you keep. */
  protected abstract onData(chunk: Buffer): void;

  get state(): TcpConnectionState {
    return this.#state;
  }

  get address(): string {
    return this.#address;
  }

  /** The handlers of the step under way, if any. */
  protected get outstanding(): H | undefined {
    return this.#outstanding;
  }

  /** Why the connection ended; undefined while it has not. */
  protected get endReason(): Error | undefined {
    return this.#endReason;
  }

  /** Called once when the connection ends for any reason (also after destroy()). */
  onEnd(listener: (reason: Error) => void): void {
    if (this.#endReason) listener(this.#endReason);
    else this.#endListeners.add(listener);
  }

  /** Closes the socket now; an outstanding step fails. Safe to call at any time. */
  destroy(reason: Error = new Error('the connection was closed by porter')): void {
    this.end(reason);
  }

  /** Connects within connectTimeoutMs, then logs in; rejects with `opening.openError` of what went wrong. */
  protected async openWith(signal: AbortSignal | undefined, opening: Opening<H>): Promise<void> {
    if (this.#state !== 'idle') throw new Error(`${this.#words.name}: open() may be called once`);
    const { host, port, connectTimeoutMs } = this.#endpoint;
    this.#state = 'connecting';
    const socket = netConnect({
      host,
      port,
      onread: {
        buffer: READ_BUFFER,
        callback: (bytes: number, buffer: Uint8Array) => {
          this.onData((buffer as Buffer).subarray(0, bytes));
          // true: keep reading (false would pause the socket).
          return true;
        },
      },
    });
    this.#socket = socket;
    socket.setNoDelay(true);
    socket.on('error', (error: Error) => this.end(describeSocketError(error)));
    // allowHalfOpen is off: a FIN from the server ends the connection; treat it as closed at once
    // so that no command is written into a connection the server is leaving.
    socket.on('end', () => this.end(new Error('the server closed the connection')));
    socket.on('close', () => this.end(new Error('the connection closed')));
    try {
      await this.within<void>(connectTimeoutMs, signal, `connecting to ${this.#words.server} at ${this.address}`, (resolve, reject) => {
        const onConnect = () => resolve(undefined);
        socket.once('connect', onConnect);
        const onEnd = (reason: Error) => {
          socket.off('connect', onConnect);
          reject(reason);
        };
        return { ...opening.meanwhile, onEnd } as H;
      });
      this.#state = 'authenticating';
      await opening.login(socket, signal);
    } catch (error) {
      this.end(error as Error);
      throw opening.openError(error);
    }
    socket.setKeepAlive(true, KEEPALIVE_DELAY_MS);
    this.#state = 'ready';
  }

  /**
   * The socket to write a request into: NotSentError when the connection is not ready, has a
   * `request` (or command) in flight already, or the signal has aborted.
   */
  protected socketFor(request: string, signal: AbortSignal | undefined): Socket {
    if (this.#state !== 'ready' || !this.#socket) {
      throw new NotSentError(`${this.#words.name} to ${this.address} is not open; the command was not sent`);
    }
    if (this.#outstanding) {
      throw new NotSentError(`${this.#words.name} to ${this.address} already has a ${request} in flight; the command was not sent`);
    }
    if (signal?.aborted) throw new NotSentError('the command was cancelled before it was sent', { cause: signal.reason });
    return this.#socket;
  }

  /**
   * What a request that failed comes to, before the protocol words its unknown outcome: not written,
   * NotSentError; an answer over the cap, that error; otherwise the connection is destroyed (a late
   * answer would be taken for the next one) and the protocol decides.
   */
  protected failedRequest(error: unknown, written: boolean, isTooLarge: (error: unknown) => boolean): void {
    if (!written) {
      throw new NotSentError(`${this.#words.name} to ${this.address} failed before the command was written; it was not sent`, {
        cause: error,
      });
    }
    if (isTooLarge(error)) throw error;
    this.end(error as Error);
  }

  /** Runs one outstanding step (see stepWithin): its handlers receive what the socket brings until it settles. */
  protected within<T>(
    timeoutMs: number,
    signal: AbortSignal | undefined,
    what: string,
    start: (resolve: (value: T) => void, reject: (reason: Error) => void) => H,
  ): Promise<T> {
    return stepWithin(this.#stepHost, timeoutMs, signal, what, start);
  }

  #listenTo(signal: AbortSignal | undefined): void {
    this.#listenedSignal?.removeEventListener('abort', this.#onSignalAbort);
    this.#listenedSignal = signal;
    signal?.addEventListener('abort', this.#onSignalAbort);
  }

  /** Ends the connection once: the socket destroyed, the outstanding step and the end listeners told. */
  protected end(reason: Error): void {
    if (this.#endReason) return;
    this.#endReason = reason;
    this.#state = 'closed';
    // Nothing of an ended connection stays on a caller's long-lived signal.
    this.#listenTo(undefined);
    this.#socket?.destroy();
    const outstanding = this.#outstanding;
    this.#outstanding = undefined;
    outstanding?.onEnd(reason);
    for (const listener of this.#endListeners) listener(reason);
    this.#endListeners.clear();
  }
}

/**
 * The error `open` rejects with: a refused password or the protocol's own connect error as it is;
 * out of file descriptors named as this host's limit (not the game server's or the network's);
 * anything else in the protocol's words (`otherwise`, given the cause's message).
 */
export function openErrorOf(
  error: unknown,
  ConnectError: new (message: string, options: { cause: unknown }) => Error,
  where: string,
  otherwise: (message: string) => string,
): Error {
  if (error instanceof CredentialsError || error instanceof ConnectError) return error;
  const message = messageOf(error);
  if (isOutOfFiles(error)) return new ConnectError(`could not connect to ${where}: ${message}; ${outOfFilesAdvice()}`, { cause: error });
  return new ConnectError(otherwise(message), { cause: error });
}

function describeSocketError(error: Error): Error {
  const code = (error as NodeJS.ErrnoException).code;
  return new Error(code ? `${code}: ${error.message}` : error.message, { cause: error });
}

/**
 * How a reconnecting link keeps a stream console's connection (RCON, telnet): usable while
 * logged in, ended with the reason it ended for, destroyed when dropped or when porter closes the
 * session (`closing` says so to whatever was outstanding).
 */
export function tcpLinkTransport<C extends TcpConnection<StepHandlers>>(
  open: (signal: AbortSignal) => Promise<C>,
  closing: string,
): LinkTransport<C> {
  return {
    open,
    isOpen: (connection) => connection.state === 'ready',
    watch: (connection, ended) => connection.onEnd((reason) => ended(reason.message)),
    drop: (connection) => connection.destroy(),
    release: (connection) => connection.destroy(new Error(closing)),
  };
}
