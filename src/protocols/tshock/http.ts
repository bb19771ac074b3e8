import { Client } from 'undici';
import { startDeadline, type Clock } from '../../clock.js';
import { BodyTooLargeError, errorCode, NOT_SENT_CODES, readCappedBody } from '../../net/http.js';

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

export interface HttpAnswer {
  readonly status: number;
  readonly body: string;
}

export interface TShockHttpOptions {
  readonly origin: string;
  /** Deadline for the TCP connect: past it the request provably was not sent. */
  readonly connectTimeoutMs: number;
  readonly clock: Clock;
  /** A larger body is not read to its end and the request counts as unanswered. */
  readonly maxBodyBytes: number;
}

/**
 * HTTP to one TShock REST API over undici, one request at a time, each on a connection of its
 * own (`reset`): TShock closes the connection after every answer (`Connection: close` in
 * Rest.OnRequest), and a fresh connection makes "not sent" provable, since a request can only be
 * written once its own connect succeeded. Deadlines as the Seller API client has them: the
 * connect within `connectTimeoutMs`, the answer within `timeoutMs` of the request (undici's
 * headers and body timeouts), the whole exchange within both together on the injected clock.
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
    const controller = new AbortController();
    let timedOut = false;
    const cancelDeadline = startDeadline(this.#options.clock, this.#options.connectTimeoutMs + timeoutMs, () => {
      timedOut = true;
      controller.abort();
    });
    const onAbort = () => controller.abort();
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      const response = await this.#client.request({
        method: 'GET',
        path,
        headers: { accept: 'application/json' },
        reset: true,
        signal: controller.signal,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
      });
      const body = await readCappedBody(response.body, this.#options.maxBodyBytes);
      return { status: response.statusCode, body };
    } catch (error) {
      if (error instanceof BodyTooLargeError)
        throw new RequestUnanswered(`the answer exceeded ${this.#options.maxBodyBytes} bytes`, 'too-large');
      if (timedOut) throw new RequestUnanswered(`no answer within ${timeoutMs} ms`, 'timeout');
      if (signal?.aborted) throw new RequestUnanswered('cancelled after it was sent');
      const code = errorCode(error);
      if (code !== undefined && NOT_SENT_CODES.has(code)) {
        throw new RequestNotSent(code === 'UND_ERR_CONNECT_TIMEOUT' ? `no connection within ${this.#options.connectTimeoutMs} ms` : code);
      }
      if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') {
        throw new RequestUnanswered(`no answer within ${timeoutMs} ms`, 'timeout');
      }
      throw new RequestUnanswered(code === undefined ? 'the connection failed' : `the connection failed (${code})`);
    } finally {
      cancelDeadline();
      signal?.removeEventListener('abort', onAbort);
    }
  }

  async close(): Promise<void> {
    await this.#client.destroy().catch(() => undefined);
  }
}
