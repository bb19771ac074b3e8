import { Client, type Dispatcher } from 'undici';
import { startDeadline, type Clock } from '../../clock.js';
import { DelegatingHandler } from '../../net/delegating-handler.js';
import { BodyTooLargeError, errorCode, NOT_SENT_CODES, readCappedBody } from '../../net/http.js';
import { withDeadline } from '../../abort.js';

/** The request never reached the server: nothing can have run, it may be sent again. */
export class RequestNotSent extends Error {
  constructor(readonly why: string) {
    super(why);
  }
}

/** The request was sent (or may have been) and no whole answer came: whatever it asked may have run. */
export class RequestUnanswered extends Error {
  constructor(
    readonly why: string,
    readonly kind: 'timeout' | 'lost' | 'too-large' = 'lost',
  ) {
    super(why);
  }
}

interface HttpAnswer {
  readonly status: number;
  readonly body: string;
}

interface TShockHttpOptions {
  readonly origin: string;
  /** Deadline for the TCP connect: past it the request provably was not sent. */
  readonly connectTimeoutMs: number;
  readonly clock: Clock;
  /** A larger body is not read to its end and the request counts as unanswered. */
  readonly maxBodyBytes: number;
}

/** Tells `started` when undici writes the request on its connection; everything else passes on. */
class StartWatcher extends DelegatingHandler {
  readonly #started: () => void;

  constructor(inner: Dispatcher.DispatchHandler, started: () => void) {
    super(inner);
    this.#started = started;
  }

  override onRequestStart(controller: Dispatcher.DispatchController, context: unknown): void {
    this.#started();
    super.onRequestStart(controller, context);
  }
}

/**
 * HTTP to one TShock REST API over undici, one request at a time, each on a connection of its
 * own (`reset`): TShock closes the connection after every answer (`Connection: close` in
 * Rest.OnRequest), and a fresh connection makes "not sent" provable, since a request can only be
 * written once its own connect succeeded. Deadlines: the connect within `connectTimeoutMs`
 * (undici's), the answer within `timeoutMs` of the moment undici writes the request, the whole
 * exchange within both together. The answer and whole-exchange deadlines are porter's
 * (startDeadline on the injected clock), never undici's headers and body timeouts: those run on
 * timers of their own that would win over an answer already waiting in the socket after a freeze
 * (docs/design.md#frozen-and-thawed), and turn a command that ran into an unknown outcome.
 * Errors carry an error code at most, never undici's message: that may hold the path, and the
 * path holds the token.
 */
export class TShockHttp {
  readonly #client: Client;
  readonly #options: TShockHttpOptions;

  constructor(options: TShockHttpOptions) {
    this.#options = options;
    this.#client = new Client(options.origin, { connect: { timeout: options.connectTimeoutMs }, pipelining: 1 });
  }

  /** The answer, whatever its HTTP status; RequestNotSent or RequestUnanswered when there is none. */
  async get(path: string, timeoutMs: number, signal?: AbortSignal): Promise<HttpAnswer> {
    if (signal?.aborted) throw new RequestNotSent('cancelled before it was sent');
    // The whole exchange within connect + answer time; the answer within its own once the request is out.
    const within = withDeadline(this.#options.clock, this.#options.connectTimeoutMs + timeoutMs, signal);
    let cancelAnswerDeadline = () => {};
    try {
      const dispatcher = this.#client.compose(
        (dispatch) => (options, handler) =>
          dispatch(
            options,
            new StartWatcher(handler, () => {
              cancelAnswerDeadline();
              cancelAnswerDeadline = startDeadline(this.#options.clock, timeoutMs, within.expire);
            }),
          ),
      );
      const response = await dispatcher.request({
        method: 'GET',
        path,
        headers: { accept: 'application/json' },
        reset: true,
        signal: within.signal,
        headersTimeout: 0,
        bodyTimeout: 0,
      });
      const body = await readCappedBody(response.body, this.#options.maxBodyBytes);
      return { status: response.statusCode, body };
    } catch (error) {
      if (error instanceof BodyTooLargeError)
        throw new RequestUnanswered(`the answer exceeded ${this.#options.maxBodyBytes} bytes`, 'too-large');
      if (within.timedOut) throw new RequestUnanswered(`no answer within ${timeoutMs} ms`, 'timeout');
      if (signal?.aborted) throw new RequestUnanswered('cancelled after it was sent');
      const code = errorCode(error);
      if (code !== undefined && NOT_SENT_CODES.has(code)) {
        throw new RequestNotSent(code === 'UND_ERR_CONNECT_TIMEOUT' ? `no connection within ${this.#options.connectTimeoutMs} ms` : code);
      }
      throw new RequestUnanswered(code === undefined ? 'the connection failed' : `the connection failed (${code})`);
    } finally {
      within.release();
      cancelAnswerDeadline();
    }
  }

  async close(): Promise<void> {
    await this.#client.destroy().catch(() => undefined);
  }
}
