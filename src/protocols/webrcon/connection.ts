import type { Duplex } from 'node:stream';
import { WebSocket, type Dispatcher } from 'undici';
import { startDeadline, type Clock } from '../../clock.js';
import { CredentialsError, PorterError } from '../../errors.js';
import { handshakeRecorder, type HandshakeAnswer } from './handshake.js';
import { NON_LITERAL_PASSWORD_HINT, type WebRconAddress } from './url.js';

/** The WebSocket could not be opened (refused, timed out, not a WebRCON port). Retried with backoff. */
export class WebRconConnectError extends PorterError {
  override readonly code = 'E_WEBRCON_CONNECT';
}

interface WebRconOpenOptions {
  readonly address: WebRconAddress;
  readonly connectTimeoutMs: number;
  /** Shared by the attempts of one executor; each attempt adds its own handshake recorder. */
  readonly dispatcher: Dispatcher;
  readonly clock: Clock;
  readonly signal?: AbortSignal;
}

/** How long a polite close waits for the server's close frame before the socket is destroyed. */
const CLOSE_GRACE_MS = 1000;

function handshakeError(answer: HandshakeAnswer, address: WebRconAddress): Error {
  const where = `Rust WebRCON at ${address.display}`;
  const passwordHint = address.literal ? '' : `; note: ${NON_LITERAL_PASSWORD_HINT}`;
  switch (answer.kind) {
    case 'not-http':
      return new CredentialsError(
        `${where} refused the connection before the WebSocket handshake, which is how Rust rejects a wrong rcon.password ` +
          '(and, for a while, an address that failed 5 times): set servers[].executor.password (or passwordFile, or PORTER_RCON_PASSWORD) ' +
          `to the server's +rcon.password, and check that this port is its rcon.port${passwordHint}`,
      );
    case 'status':
      if (answer.status === 401 || answer.status === 403) {
        return new CredentialsError(
          `${where} answered the WebSocket handshake with HTTP ${answer.status}: the password was rejected; ` +
            `set servers[].executor.password (or passwordFile, or PORTER_RCON_PASSWORD) to the server's +rcon.password${passwordHint}`,
        );
      }
      return new WebRconConnectError(
        `${where} answered the WebSocket handshake with HTTP ${answer.status} instead of 101: ` +
          "check that host and port are the Rust server's rcon.port and that it runs with +rcon.web 1",
      );
    case 'error':
      return new WebRconConnectError(
        `${where} could not be reached (${answer.code}): is the Rust server running with +rcon.web 1 on that port?`,
      );
    case 'upgraded':
      return new WebRconConnectError(
        `${where} accepted the upgrade but the WebSocket handshake was not valid; is this a Rust WebRCON port?`,
      );
    case 'none':
      return new WebRconConnectError(`${where} could not be reached: is the Rust server running with +rcon.web 1 on that port?`);
  }
}

/**
 * One WebSocket to a Rust server. Frames are passed up as text; the caller matches answers.
 * The address carries the password in its URL, so only `address.display` ever reaches a
 * message.
 */
export class WebRconConnection {
  #frames = 0;
  #open = true;
  #onFrame: (text: string) => void = () => {};
  #onEnd: (reason: string) => void = () => {};
  readonly #ended: Promise<void>;

  readonly #ws: WebSocket;
  readonly #socket: Duplex | undefined;
  readonly #clock: Clock;

  private constructor(ws: WebSocket, socket: Duplex | undefined, clock: Clock) {
    this.#ws = ws;
    this.#socket = socket;
    this.#clock = clock;
    ws.addEventListener('message', (event) => {
      this.#frames += 1;
      if (typeof event.data === 'string') this.#onFrame(event.data);
    });
    this.#ended = new Promise<void>((resolve) => {
      ws.addEventListener(
        'close',
        (event) => {
          this.#open = false;
          resolve();
          this.#onEnd(
            event.code === 1006
              ? 'the connection was lost (no close frame)'
              : `the server closed the connection (code ${event.code}${event.reason ? `: ${event.reason}` : ''})`,
          );
        },
        { once: true },
      );
    });
  }

  static open(options: WebRconOpenOptions): Promise<WebRconConnection> {
    const { address, clock, signal } = options;
    const recorder = handshakeRecorder();
    const dispatcher = options.dispatcher.compose(recorder.interceptor);
    return new Promise<WebRconConnection>((resolve, reject) => {
      if (signal?.aborted) {
        reject(new WebRconConnectError(`connecting to Rust WebRCON at ${address.display} was cancelled`));
        return;
      }
      const ws = new WebSocket(address.url, { dispatcher });
      let cancelDeadline = () => {};
      let settled = false;
      const finish = () => {
        settled = true;
        cancelDeadline();
        signal?.removeEventListener('abort', onAbort);
      };
      const fail = (error: Error) => {
        if (settled) return;
        finish();
        ws.close();
        recorder.socket()?.destroy();
        reject(error);
      };
      const onAbort = () => fail(new WebRconConnectError(`connecting to Rust WebRCON at ${address.display} was cancelled`));
      signal?.addEventListener('abort', onAbort, { once: true });
      // A failed handshake fires 'error' then 'close'; 'close' carries the decision.
      ws.addEventListener('error', () => {});
      ws.addEventListener(
        'open',
        () => {
          if (settled) return;
          finish();
          resolve(new WebRconConnection(ws, recorder.socket(), clock));
        },
        { once: true },
      );
      ws.addEventListener('close', () => fail(handshakeError(recorder.answer(), address)), { once: true });
      cancelDeadline = startDeadline(clock, options.connectTimeoutMs, () =>
        fail(
          new WebRconConnectError(
            `Rust WebRCON at ${address.display} did not complete the WebSocket handshake within ${options.connectTimeoutMs} ms ` +
              '(servers[].executor.connectTimeoutMs): is the server up and reachable?',
          ),
        ),
      );
    });
  }

  get isOpen(): boolean {
    return this.#open && this.#ws.readyState === WebSocket.OPEN;
  }

  /** Frames of any kind received so far: a connection silent since a request was sent may be dead. */
  get framesReceived(): number {
    return this.#frames;
  }

  onFrame(listener: (text: string) => void): void {
    this.#onFrame = listener;
  }

  onEnd(listener: (reason: string) => void): void {
    this.#onEnd = listener;
  }

  /** False when the socket is no longer open; true means the frame was handed to the socket. */
  send(text: string): boolean {
    if (!this.isOpen) return false;
    this.#ws.send(text);
    return true;
  }

  /** Drops the connection at once (a dead peer would never answer a close frame). */
  terminate(): void {
    // Not open from now on, before the close event comes: nothing more may be sent on it.
    this.#open = false;
    if (this.#socket) this.#socket.destroy();
    else this.#ws.close();
  }

  /** Closes politely, and destroys the socket if the server does not answer the close frame in time. */
  async close(): Promise<void> {
    if (this.#ws.readyState === WebSocket.CLOSED) return;
    this.#ws.close(1000);
    const timer = new AbortController();
    const answered = await Promise.race([
      this.#ended.then(() => true),
      this.#clock.sleep(CLOSE_GRACE_MS, timer.signal).then(
        () => false,
        () => false,
      ),
    ]);
    timer.abort();
    if (!answered) this.terminate();
    await this.#ended;
  }
}
