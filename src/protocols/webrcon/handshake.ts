import type { IncomingHttpHeaders } from 'node:http';
import type { Duplex } from 'node:stream';
import { errors, type Dispatcher } from 'undici';
import { DelegatingHandler } from '../../net/delegating-handler.js';

/**
 * What the server answered to the WebSocket upgrade request. The WebSocket API reports every
 * failed handshake the same way (an error event, close code 1006), but a wrong password and a
 * server that is down need opposite handling (stop for good vs. retry), so the answer is read
 * one level lower, from the dispatcher the WebSocket uses.
 *
 * Rust refuses a wrong password (and an address it banned after repeated failures) before the
 * handshake: it writes a bare WebSocket close frame (88 02 03 e8) instead of an HTTP response and
 * closes. The HTTP parser sees bytes that are not HTTP: `not-http`.
 */
export type HandshakeAnswer =
  | { readonly kind: 'none' }
  | { readonly kind: 'upgraded' }
  | { readonly kind: 'status'; readonly status: number }
  | { readonly kind: 'not-http' }
  | { readonly kind: 'error'; readonly code: string };

class RecordingHandler extends DelegatingHandler {
  readonly #record: (answer: HandshakeAnswer, socket?: Duplex) => void;

  constructor(inner: Dispatcher.DispatchHandler, record: (answer: HandshakeAnswer, socket?: Duplex) => void) {
    super(inner);
    this.#record = record;
  }

  override onRequestUpgrade(
    controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: IncomingHttpHeaders,
    socket: Duplex,
  ): void {
    this.#record({ kind: 'upgraded' }, socket);
    super.onRequestUpgrade(controller, statusCode, headers, socket);
  }

  override onResponseStart(
    controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: IncomingHttpHeaders,
    statusMessage?: string,
  ): void {
    this.#record({ kind: 'status', status: statusCode });
    super.onResponseStart(controller, statusCode, headers, statusMessage);
  }

  override onResponseError(controller: Dispatcher.DispatchController, error: Error): void {
    if (error instanceof errors.HTTPParserError) this.#record({ kind: 'not-http' });
    else this.#record({ kind: 'error', code: (error as NodeJS.ErrnoException).code ?? error.name });
    super.onResponseError(controller, error);
  }
}

interface HandshakeRecorder {
  readonly interceptor: Dispatcher.DispatcherComposeInterceptor;
  answer(): HandshakeAnswer;
  /** The upgraded socket: the WebSocket API cannot drop a connection without a close handshake, this can. */
  socket(): Duplex | undefined;
}

/** An interceptor for one connection attempt, and what it saw. */
export function handshakeRecorder(): HandshakeRecorder {
  let answer: HandshakeAnswer = { kind: 'none' };
  let upgraded: Duplex | undefined;
  const record = (next: HandshakeAnswer, socket?: Duplex) => {
    // A status seen first stays: undici may retry a 401 once and then error out.
    if (answer.kind === 'none' || next.kind === 'upgraded') answer = next;
    if (socket) upgraded = socket;
  };
  return {
    interceptor: (dispatch) => (options, handler) => dispatch(options, new RecordingHandler(handler, record)),
    answer: () => answer,
    socket: () => upgraded,
  };
}
