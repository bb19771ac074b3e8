import { connect as netConnect, type Socket } from 'node:net';
import type { Logger } from 'pino';
import { systemClock, type Clock } from '../../clock.js';
import { stepWithin } from '../step.js';
import { CredentialsError, NotSentError, OutcomeUnknownError } from '../../errors.js';
import { AnswerTooLargeError, MAX_ANSWER_BYTES } from '../answer-limit.js';
import { AnswerFrame } from './answer.js';
import { newEndMarker, type EndMarker } from './console-text.js';
import { TelnetConnectError, TelnetProtocolError } from './errors.js';
import { TelnetLineReader } from './line-reader.js';
import { ConsoleLogin } from './login.js';
import { isOutOfFiles, outOfFilesAdvice } from '../../net/open-files.js';

export interface TelnetConnectionOptions {
  readonly host: string;
  readonly port: number;
  readonly password: string;
  /** Deadline for the TCP connect, and again for the login once connected. */
  readonly connectTimeoutMs: number;
  /** Most answer bytes collected for one command; default MAX_ANSWER_BYTES. */
  readonly maxAnswerBytes?: number;
  /** For tests: where end markers come from. */
  readonly newMarker?: () => EndMarker;
  readonly logger: Logger;
  readonly clock?: Clock;
}

export type TelnetConnectionState = 'idle' | 'connecting' | 'authenticating' | 'ready' | 'closed';

/** Where the socket's lines go while a step (login or command) is outstanding. */
interface Outstanding {
  onLine(line: string): void;
  onEnd(reason: Error): void;
}

const KEEPALIVE_DELAY_MS = 15_000;
/** Lines that came before the login step started listening (the same read as the TCP connect): kept for it. */
const MAX_EARLY_LINES = 64;

/**
 * One TCP connection to a 7 Days to Die telnet console: connect, log in, then one command at a
 * time, each followed by an end marker (docs/design.md#executors). Never reused after a timeout
 * or any doubt: a late answer would be taken for the next command's, so it destroys itself and
 * the executor opens a fresh one. Socket errors end the connection, never the process.
 */
export class TelnetConnection {
  readonly #options: TelnetConnectionOptions;
  readonly #clock: Clock;
  readonly #maxAnswerBytes: number;
  readonly #reader: TelnetLineReader;
  readonly #newMarker: () => EndMarker;
  readonly #early: string[] = [];
  #socket: Socket | undefined;
  #state: TelnetConnectionState = 'idle';
  #outstanding: Outstanding | undefined;
  #endReason: Error | undefined;
  readonly #endListeners = new Set<(reason: Error) => void>();

  constructor(options: TelnetConnectionOptions) {
    this.#options = options;
    this.#clock = options.clock ?? systemClock;
    this.#maxAnswerBytes = options.maxAnswerBytes ?? MAX_ANSWER_BYTES;
    // A single line longer than a whole answer may be can only be a flood or another protocol.
    this.#reader = new TelnetLineReader(this.#maxAnswerBytes);
    this.#newMarker = options.newMarker ?? newEndMarker;
  }

  get state(): TelnetConnectionState {
    return this.#state;
  }

  get address(): string {
    return `${this.#options.host}:${this.#options.port}`;
  }

  /** Called once when the connection ends for any reason (also after destroy()). */
  onEnd(listener: (reason: Error) => void): void {
    if (this.#endReason) listener(this.#endReason);
    else this.#endListeners.add(listener);
  }

  /**
   * Connects and logs in. Rejects with CredentialsError when the console refuses the password,
   * TelnetConnectError for anything else (refused, timed out, closed, aborted).
   */
  async open(signal?: AbortSignal): Promise<void> {
    if (this.#state !== 'idle') throw new Error('TelnetConnection.open() may be called once');
    const { host, port, connectTimeoutMs } = this.#options;
    this.#state = 'connecting';
    const socket = netConnect({ host, port });
    this.#socket = socket;
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => this.#onData(chunk));
    socket.on('error', (error: Error) => this.#end(describeSocketError(error)));
    // A FIN from the console ends the connection at once, so no command is written into it.
    socket.on('end', () => this.#end(new Error('the server closed the connection')));
    socket.on('close', () => this.#end(new Error('the connection closed')));
    try {
      await this.#within<void>(
        connectTimeoutMs,
        signal,
        `connecting to the 7 Days to Die console at ${this.address}`,
        (resolve, reject) => {
          const onConnect = () => resolve(undefined);
          socket.once('connect', onConnect);
          return {
            onLine: (line) => this.#keepEarly(line),
            onEnd: (reason) => {
              socket.off('connect', onConnect);
              reject(reason);
            },
          };
        },
      );
      this.#state = 'authenticating';
      await this.#logIn(signal);
    } catch (error) {
      this.#end(error as Error);
      throw this.#asOpenError(error);
    }
    socket.setKeepAlive(true, KEEPALIVE_DELAY_MS);
    this.#state = 'ready';
  }

  /**
   * Runs one command and returns its answer (log lines left out). NotSentError when nothing was
   * written; OutcomeUnknownError once it was written and its end marker's reply did not come (the
   * connection is then destroyed), including when the connection dropped halfway through the
   * answer. An answer over maxAnswerBytes is AnswerTooLargeError, and the connection is destroyed
   * at once: the rest is never read.
   */
  async request(command: string, timeoutMs: number, signal?: AbortSignal): Promise<string> {
    if (this.#state !== 'ready' || !this.#socket) {
      throw new NotSentError(`the telnet connection to ${this.address} is not open; the command was not sent`);
    }
    if (this.#outstanding) {
      throw new NotSentError(`the telnet connection to ${this.address} already has a command in flight; the command was not sent`);
    }
    if (signal?.aborted) throw new NotSentError('the command was cancelled before it was sent', { cause: signal.reason });
    const socket = this.#socket;
    const marker = this.#newMarker();
    const frame = new AnswerFrame(marker.reply, this.#maxAnswerBytes);
    let written = false;
    try {
      return await this.#within(
        timeoutMs,
        signal,
        `waiting for the answer from the 7 Days to Die console at ${this.address}`,
        (resolve, reject) => {
          // One write: the console queues both lines in order, so the marker's reply follows the answer.
          socket.write(`${command}\r\n${marker.command}\r\n`, 'utf8');
          written = true;
          return {
            onLine: (line) => {
              const step = frame.take(line);
              if (step === 'end') resolve(frame.text());
              // Destroyed here, synchronously: not one more chunk of the flood is read.
              else if (step === 'overflow')
                this.destroy(new AnswerTooLargeError(`the 7 Days to Die console at ${this.address}`, this.#maxAnswerBytes));
            },
            onEnd: reject,
          };
        },
      );
    } catch (error) {
      if (!written) {
        throw new NotSentError(`the telnet connection to ${this.address} failed before the command was written; it was not sent`, {
          cause: error,
        });
      }
      if (error instanceof AnswerTooLargeError) throw error;
      this.destroy(error as Error);
      const partial = frame.lineCount > 0 ? ` after ${frame.lineCount} line${frame.lineCount === 1 ? '' : 's'} of its answer` : '';
      throw new OutcomeUnknownError(
        `the 7 Days to Die console at ${this.address} did not finish its answer${partial} (${(error as Error).message}); ` +
          'the command was sent and may have run, so it is not sent again',
        { cause: error },
      );
    }
  }

  /** Closes the socket now; an outstanding step fails. Safe to call at any time. */
  destroy(reason: Error = new Error('the connection was closed by porter')): void {
    this.#end(reason);
  }

  async #logIn(signal: AbortSignal | undefined): Promise<void> {
    const socket = this.#socket!;
    const login = new ConsoleLogin(this.#options.password, this.#newMarker);
    await this.#within<void>(
      this.#options.connectTimeoutMs,
      signal,
      `waiting for the 7 Days to Die console at ${this.address} to log porter in`,
      (resolve, reject) => {
        const onLine = (line: string) => {
          const step = login.take(line);
          if (step.kind === 'write') socket.write(`${step.line}\r\n`, 'utf8');
          else if (step.kind === 'ready') resolve(undefined);
          else if (step.kind === 'rejected') reject(this.#rejection(step.reason));
        };
        queueMicrotask(() => {
          for (const line of this.#early.splice(0)) onLine(line);
        });
        return {
          onLine,
          onEnd: (reason) =>
            reject(
              new TelnetConnectError(
                `the 7 Days to Die console at ${this.address} ended the connection during login (${reason.message}); ` +
                  "check that the port is the server's TelnetPort and that TelnetEnabled is true in serverconfig.xml",
                { cause: reason },
              ),
            ),
        };
      },
    );
  }

  #rejection(reason: 'incorrect' | 'too-many'): CredentialsError {
    const fix =
      'fix "password" or "passwordFile" of this server\'s executor in the config, or PORTER_RCON_PASSWORD, ' +
      "so that it matches TelnetPassword in the server's serverconfig.xml";
    if (reason === 'incorrect') return new CredentialsError(`the telnet password was rejected by ${this.address}; ${fix}`);
    return new CredentialsError(
      `the 7 Days to Die console at ${this.address} refused porter's login after too many failed login attempts from this address ` +
        `(TelnetFailedLoginLimit; it blocks the address for TelnetFailedLoginsBlocktime seconds); ${fix}`,
    );
  }

  #keepEarly(line: string): void {
    if (this.#early.length < MAX_EARLY_LINES) this.#early.push(line);
  }

  /** Runs one outstanding step (see stepWithin): its handlers receive what the socket brings until it settles. */
  #within<T>(
    timeoutMs: number,
    signal: AbortSignal | undefined,
    what: string,
    start: (resolve: (value: T) => void, reject: (reason: Error) => void) => Outstanding,
  ): Promise<T> {
    const host = {
      clock: this.#clock,
      endReason: this.#endReason,
      track: (handlers: Outstanding | undefined) => {
        this.#outstanding = handlers;
      },
    };
    return stepWithin(host, timeoutMs, signal, what, start);
  }

  #onData(chunk: Buffer): void {
    const { lines, overflow } = this.#reader.push(chunk);
    for (const line of lines) {
      // A line may have ended the connection (an overflow): the rest of the chunk is not looked at.
      if (this.#endReason) return;
      if (this.#outstanding) this.#outstanding.onLine(line);
      else if (this.#state !== 'ready') this.#keepEarly(line);
      // Between commands only log lines come: nothing to act on.
    }
    if (overflow) {
      this.#end(
        this.#outstanding && this.#state === 'ready'
          ? new AnswerTooLargeError(`the 7 Days to Die console at ${this.address}`, this.#maxAnswerBytes)
          : new TelnetProtocolError(
              `the peer at ${this.address} sent a line longer than ${this.#maxAnswerBytes} bytes, which no 7 Days to Die console does; ` +
                "check that the port is the server's TelnetPort",
            ),
      );
    }
  }

  #end(reason: Error): void {
    if (this.#endReason) return;
    this.#endReason = reason;
    this.#state = 'closed';
    this.#socket?.destroy();
    const outstanding = this.#outstanding;
    this.#outstanding = undefined;
    outstanding?.onEnd(reason);
    for (const listener of this.#endListeners) listener(reason);
    this.#endListeners.clear();
  }

  #asOpenError(error: unknown): Error {
    if (error instanceof CredentialsError || error instanceof TelnetConnectError) return error;
    if (isOutOfFiles(error)) {
      return new TelnetConnectError(
        `could not connect to the 7 Days to Die console at ${this.address}: ${(error as Error).message}; ${outOfFilesAdvice()}`,
        { cause: error },
      );
    }
    return new TelnetConnectError(
      `could not log in to the 7 Days to Die console at ${this.address}: ${(error as Error).message}; check host and port ` +
        "(the server's TelnetPort, 8081 by default), that TelnetEnabled is true in serverconfig.xml and that a firewall lets porter reach it",
      { cause: error },
    );
  }
}

function describeSocketError(error: Error): Error {
  const code = (error as NodeJS.ErrnoException).code;
  return new Error(code ? `${code}: ${error.message}` : error.message, { cause: error });
}
