import type { Socket } from 'node:net';
import type { Logger } from 'pino';
import { CredentialsError, messageOf, OutcomeUnknownError } from '../../errors.js';
import { AnswerTooLargeError, MAX_ANSWER_BYTES } from '../answer-limit.js';
import { AnswerFrame } from './answer.js';
import { newEndMarker, type EndMarker } from './console-text.js';
import { TelnetConnectError, TelnetProtocolError } from './errors.js';
import { TelnetLineReader } from './line-reader.js';
import { ConsoleLogin } from './login.js';
import { openErrorOf, TcpConnection, type TcpEndpoint } from '../tcp-connection.js';

/** connectTimeoutMs bounds the TCP connect, and again the login once connected. */
interface TelnetConnectionOptions extends TcpEndpoint {
  readonly password: string;
  /** Most answer bytes collected for one command; default MAX_ANSWER_BYTES. */
  readonly maxAnswerBytes?: number;
  /** For tests: where end markers come from. */
  readonly newMarker?: () => EndMarker;
  readonly logger: Logger;
}

/** Where the socket's lines go while a step (login or command) is outstanding. */
interface Outstanding {
  onLine(line: string): void;
  onEnd(reason: Error): void;
}

/** Lines that came before the login step started listening (the same read as the TCP connect): kept for it. */
const MAX_EARLY_LINES = 64;

/**
 * One TCP connection to a 7 Days to Die telnet console: connect, log in, then one command at a
 * time, each followed by an end marker (docs/design.md#executors). Never reused after a timeout
 * or any doubt: a late answer would be taken for the next command's, so it destroys itself and
 * the executor opens a fresh one. Socket errors end the connection, never the process.
 */
export class TelnetConnection extends TcpConnection<Outstanding> {
  readonly #options: TelnetConnectionOptions;
  readonly #maxAnswerBytes: number;
  readonly #reader: TelnetLineReader;
  readonly #newMarker: () => EndMarker;
  readonly #early: string[] = [];

  constructor(options: TelnetConnectionOptions) {
    super(options, { name: 'the telnet connection', server: 'the 7 Days to Die console' });
    this.#options = options;
    this.#maxAnswerBytes = options.maxAnswerBytes ?? MAX_ANSWER_BYTES;
    // A single line longer than a whole answer may be can only be a flood or another protocol.
    this.#reader = new TelnetLineReader(this.#maxAnswerBytes);
    this.#newMarker = options.newMarker ?? newEndMarker;
  }

  /**
   * Connects and logs in. Rejects with CredentialsError when the console refuses the password,
   * TelnetConnectError for anything else (refused, timed out, closed, aborted).
   */
  open(signal?: AbortSignal): Promise<void> {
    return this.openWith(signal, {
      meanwhile: { onLine: (line) => this.#keepEarly(line) },
      login: (socket) => this.#logIn(socket, signal),
      openError: (error) => this.#asOpenError(error),
    });
  }

  /**
   * Runs one command and returns its answer (log lines left out). NotSentError when nothing was
   * written; OutcomeUnknownError once it was written and its end marker's reply did not come (the
   * connection is then destroyed), including when the connection dropped halfway through the
   * answer. An answer over maxAnswerBytes is AnswerTooLargeError, and the connection is destroyed
   * at once: the rest is never read.
   */
  async request(command: string, timeoutMs: number, signal?: AbortSignal): Promise<string> {
    const socket = this.socketFor('command', signal);
    const marker = this.#newMarker();
    const frame = new AnswerFrame(marker.reply, this.#maxAnswerBytes);
    let written = false;
    try {
      return await this.within(
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
      this.failedRequest(error, written, (e) => e instanceof AnswerTooLargeError);
      const partial = frame.lineCount > 0 ? ` after ${frame.lineCount} line${frame.lineCount === 1 ? '' : 's'} of its answer` : '';
      throw new OutcomeUnknownError(
        `the 7 Days to Die console at ${this.address} did not finish its answer${partial} (${messageOf(error)}); ` +
          'the command was sent and may have run, so it is not sent again',
        { cause: error },
      );
    }
  }

  async #logIn(socket: Socket, signal: AbortSignal | undefined): Promise<void> {
    const login = new ConsoleLogin(this.#options.password, this.#newMarker);
    await this.within<void>(
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

  protected override onData(chunk: Buffer): void {
    const { lines, overflow } = this.#reader.push(chunk);
    for (const line of lines) {
      // A line may have ended the connection (an overflow): the rest of the chunk is not looked at.
      if (this.endReason) return;
      const outstanding = this.outstanding;
      if (outstanding) outstanding.onLine(line);
      else if (this.state !== 'ready') this.#keepEarly(line);
      // Between commands only log lines come: nothing to act on.
    }
    if (overflow) {
      this.end(
        this.outstanding && this.state === 'ready'
          ? new AnswerTooLargeError(`the 7 Days to Die console at ${this.address}`, this.#maxAnswerBytes)
          : new TelnetProtocolError(
              `the peer at ${this.address} sent a line longer than ${this.#maxAnswerBytes} bytes, which no 7 Days to Die console does; ` +
                "check that the port is the server's TelnetPort",
            ),
      );
    }
  }

  #asOpenError(error: unknown): Error {
    return openErrorOf(
      error,
      TelnetConnectError,
      `the 7 Days to Die console at ${this.address}`,
      (message) =>
        `could not log in to the 7 Days to Die console at ${this.address}: ${message}; check host and port ` +
        "(the server's TelnetPort, 8081 by default), that TelnetEnabled is true in serverconfig.xml and that a firewall lets porter reach it",
    );
  }
}
