import { Buffer } from 'node:buffer';
import type { IncomingHttpHeaders } from 'node:http';
import type { Dispatcher } from 'undici';
import { BodyTooLargeError } from './http.js';

/** A whole HTTP answer: the final status, its headers, the body read to its end. */
interface ExchangeAnswer {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  /** The body as UTF-8; undefined when it went on into `overflow` (ExchangeLimits). */
  readonly body: string | undefined;
}

interface OverflowSink {
  write(chunk: Uint8Array): void;
}

interface ExchangeLimits<S extends OverflowSink> {
  /** Past this many bytes the exchange fails with BodyTooLargeError, unless an overflow sink takes the rest. */
  readonly maxBytes: number;
  /**
   * Makes the sink that takes the whole body once it passes `maxBytes` (keeping what it needs, not
   * the body), up to `overflowMaxBytes`. Made only then: nearly every answer is small, and an idle
   * fleet's every pull would otherwise build one for nothing.
   */
  readonly startOverflow?: (() => S) | undefined;
  readonly overflowMaxBytes?: number;
}

/** Until the answer's own: one object for every exchange, never written to. */
const NO_HEADERS: IncomingHttpHeaders = Object.freeze({});

/**
 * One request through undici's `dispatch`, its answer collected straight from the handler events.
 *
 * Not `request()`: that wraps every answer in a Readable stream, read here through an async
 * iterator, and wants an AbortSignal per call. With a thousand servers pulling, those objects were
 * most of what every idle pull allocated, and they lived long enough to be promoted to the old
 * generation: the garbage collector, not porter, was the largest cost of an idle fleet
 * (docs/benchmarks.md, fleet). Here an exchange is one object, its chunks and its promise.
 *
 * `abort(reason)` settles at once with `reason`, also while the request still waits for a
 * connection (undici then drops it when its turn comes, as its own request() does).
 */
export class HttpExchange<S extends OverflowSink = OverflowSink> implements Dispatcher.DispatchHandler {
  readonly answer: Promise<ExchangeAnswer>;
  readonly #limits: ExchangeLimits<S>;
  #overflow: S | undefined;
  #resolve!: (answer: ExchangeAnswer) => void;
  #reject!: (reason: unknown) => void;
  #settled = false;
  #controller: Dispatcher.DispatchController | undefined;
  #abortReason: Error | undefined;
  #status = 0;
  #headers: IncomingHttpHeaders = NO_HEADERS;
  #chunks: Buffer[] | undefined = [];
  #size = 0;

  constructor(limits: ExchangeLimits<S>) {
    this.#limits = limits;
    this.answer = new Promise<ExchangeAnswer>((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
  }

  /** The sink the body went on into once it passed `maxBytes`; undefined while it has not. */
  get overflow(): S | undefined {
    return this.#overflow;
  }

  abort(reason: Error): void {
    if (this.#settled) return;
    this.#abortReason = reason;
    this.#fail(reason);
    this.#controller?.abort(reason);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.#controller = controller;
    if (this.#abortReason !== undefined) controller.abort(this.#abortReason);
  }

  onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders): void {
    // An informational (1xx) answer is followed by the real one.
    if (statusCode < 200) return;
    this.#status = statusCode;
    this.#headers = headers;
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.#settled) return;
    this.#size += chunk.length;
    const { maxBytes, startOverflow, overflowMaxBytes = maxBytes } = this.#limits;
    if (this.#size > (startOverflow ? overflowMaxBytes : maxBytes)) {
      const tooLarge = new BodyTooLargeError();
      this.#fail(tooLarge);
      // The rest of an oversized body is never read: the connection goes.
      controller.abort(tooLarge);
      return;
    }
    if (this.#chunks !== undefined && startOverflow && this.#size > maxBytes) {
      const overflow = startOverflow();
      this.#overflow = overflow;
      for (const kept of this.#chunks) overflow.write(kept);
      this.#chunks = undefined;
    }
    if (this.#chunks === undefined) this.#overflow?.write(chunk);
    else this.#chunks.push(chunk);
  }

  onResponseEnd(): void {
    if (this.#settled) return;
    this.#settled = true;
    const body = this.#chunks === undefined ? undefined : Buffer.concat(this.#chunks).toString('utf8');
    this.#chunks = undefined;
    this.#resolve({ status: this.#status, headers: this.#headers, body });
  }

  onResponseError(_controller: Dispatcher.DispatchController | undefined, error: Error): void {
    this.#fail(error);
  }

  #fail(reason: unknown): void {
    if (this.#settled) return;
    this.#settled = true;
    this.#chunks = undefined;
    this.#reject(reason);
  }
}
