import { OutcomeUnknownError } from '../../errors.js';
import { startDeadline, type Clock } from '../../clock.js';
import { AnswerTooLargeError, MAX_ANSWER_BYTES } from '../answer-limit.js';
import type { WebRconConnection } from './connection.js';
import { encodeRequest, MAX_IDENTIFIER, type WebRconFrame } from './protocol.js';

interface PendingRequest {
  readonly id: number;
  /** Identifier of the probe sent after it; undefined: the first answer completes the request. */
  readonly probeId: number | undefined;
  readonly connection: WebRconConnection;
  /** The connection's frame count when the request was sent. */
  readonly framesAtSend: number;
  readonly parts: string[];
  /** UTF-8 bytes of the parts, against maxAnswerBytes. */
  bytes: number;
  /** Stops the request's deadline (startDeadline: it yields to an answer already arrived). */
  cancelDeadline: () => void;
  settle(outcome: { answer: string } | { error: Error }): void;
}

interface SendOptions {
  /** Sent right after the command; its answer ends the command's answer. null: the first answer does. */
  readonly probe: string | null;
  readonly timeoutMs: number;
  readonly signal?: AbortSignal;
}

/**
 * The requests in flight on WebRCON, keyed by Identifier. Each request is settled exactly once:
 * by its answer (or its probe's), by its timeout, by its connection ending, or by its signal.
 */
export class WebRconRequests {
  readonly #pending = new Map<number, PendingRequest>();
  #nextId = 1;

  readonly #clock: Clock;
  /** For messages; never the URL. */
  readonly #display: string;
  /** Called when a request timed out on a connection that sent nothing at all since: it may be dead. */
  readonly #onSilentConnection: (connection: WebRconConnection) => void;
  /** Called when an answer outgrew maxAnswerBytes and its request failed: the rest must not be read. */
  readonly #onAnswerTooLarge: (connection: WebRconConnection) => void;
  readonly #maxAnswerBytes: number;

  constructor(
    clock: Clock,
    display: string,
    onSilentConnection: (connection: WebRconConnection) => void,
    onAnswerTooLarge: (connection: WebRconConnection) => void,
    maxAnswerBytes: number = MAX_ANSWER_BYTES,
  ) {
    this.#clock = clock;
    this.#display = display;
    this.#onSilentConnection = onSilentConnection;
    this.#onAnswerTooLarge = onAnswerTooLarge;
    this.#maxAnswerBytes = maxAnswerBytes;
  }

  send(connection: WebRconConnection, command: string, options: SendOptions): Promise<string> {
    const { probe, signal } = options;
    const id = this.#allocateId();
    const probeId = probe === null ? undefined : this.#allocateId();
    return new Promise<string>((resolve, reject) => {
      const onAbort = () =>
        pending.settle({
          error: new OutcomeUnknownError('the command was cancelled after it was sent over WebRCON; whether it ran is unknown'),
        });
      const pending: PendingRequest = {
        id,
        probeId,
        connection,
        framesAtSend: connection.framesReceived,
        parts: [],
        bytes: 0,
        cancelDeadline: () => {},
        settle: (outcome) => {
          if (this.#pending.get(id) !== pending) return;
          this.#pending.delete(id);
          if (probeId !== undefined) this.#pending.delete(probeId);
          pending.cancelDeadline();
          signal?.removeEventListener('abort', onAbort);
          if ('answer' in outcome) resolve(outcome.answer);
          else reject(outcome.error);
        },
      };
      this.#pending.set(id, pending);
      if (probeId !== undefined) this.#pending.set(probeId, pending);
      connection.send(encodeRequest(id, command));
      if (probeId !== undefined && probe !== null) connection.send(encodeRequest(probeId, probe));
      signal?.addEventListener('abort', onAbort, { once: true });
      pending.cancelDeadline = startDeadline(this.#clock, options.timeoutMs, () => this.#onTimeout(pending, options.timeoutMs));
    });
  }

  /** Takes a frame that answers a request of this connection; false when it answers none (a broadcast). */
  take(connection: WebRconConnection, frame: WebRconFrame): boolean {
    const pending = this.#pending.get(frame.identifier);
    if (!pending || pending.connection !== connection) return false;
    if (frame.identifier === pending.id) {
      pending.bytes += Buffer.byteLength(frame.message, 'utf8');
      if (pending.bytes > this.#maxAnswerBytes) {
        pending.settle({ error: new AnswerTooLargeError(`Rust WebRCON at ${this.#display}`, this.#maxAnswerBytes) });
        this.#onAnswerTooLarge(connection);
        return true;
      }
      pending.parts.push(frame.message);
      if (pending.probeId === undefined) pending.settle({ answer: frame.message });
    } else {
      pending.settle({ answer: pending.parts.join('\n') });
    }
    return true;
  }

  /** Settles the requests of a connection that ended: answered ones ran, the others are unknown. */
  connectionEnded(connection: WebRconConnection, reason: string): void {
    for (const pending of new Set(this.#pending.values())) {
      if (pending.connection !== connection) continue;
      if (pending.parts.length > 0) {
        pending.settle({ answer: pending.parts.join('\n') });
        continue;
      }
      pending.settle({
        error: new OutcomeUnknownError(
          `the WebRCON connection to ${this.#display} ended before the answer arrived (${reason}); the command was sent, so whether it ran is unknown`,
        ),
      });
    }
  }

  #allocateId(): number {
    for (;;) {
      const id = this.#nextId;
      this.#nextId = id >= MAX_IDENTIFIER ? 1 : id + 1;
      if (!this.#pending.has(id)) return id;
    }
  }

  #onTimeout(pending: PendingRequest, timeoutMs: number): void {
    if (this.#pending.get(pending.id) !== pending) return;
    if (pending.parts.length > 0) {
      // The command answered; only the probe did not. It ran.
      pending.settle({ answer: pending.parts.join('\n') });
      return;
    }
    pending.settle({
      error: new OutcomeUnknownError(
        `Rust WebRCON at ${this.#display} sent no answer within ${timeoutMs} ms (servers[].executor.timeoutMs); ` +
          'the command was sent, so whether it ran is unknown',
      ),
    });
    if (pending.connection.framesReceived === pending.framesAtSend) this.#onSilentConnection(pending.connection);
  }
}
