import type { Logger } from 'pino';
import type { Clock } from '../../clock.js';

const CLAIM_GAP_WARN_MS = 60_000;

/**
 * The claim gap (docs/design.md#delivery-semantics): a pull whose answer was lost after the request went out may have
 * claimed a command porter never learned the id of. The platform then keeps it PROCESSING until its
 * own timeout and answers every pull with 204. Porter cannot report it; it can only say so, once,
 * when nothing but empty answers followed for longer than `thresholdMs`.
 */
export class ClaimGapWatch {
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #thresholdMs: number;
  #openedAt: number | undefined;
  #reason = '';
  #warned = false;

  /** `logger` already names the server. */
  constructor(options: { clock: Clock; logger: Logger; thresholdMs?: number }) {
    this.#clock = options.clock;
    this.#logger = options.logger;
    this.#thresholdMs = options.thresholdMs ?? CLAIM_GAP_WARN_MS;
  }

  /** True while a lost answer has not been followed by a claim. */
  get open(): boolean {
    return this.#openedAt !== undefined;
  }

  /** A pull's answer was lost (timeout/reset after sending) or could not be used. */
  lost(reason: string): void {
    if (this.#openedAt !== undefined) return;
    this.#openedAt = this.#clock.now();
    this.#reason = reason;
    this.#warned = false;
  }

  /** A pull answered "nothing due"; warns once when that has lasted past the threshold. */
  empty(): void {
    if (this.#openedAt === undefined || this.#warned) return;
    const since = this.#clock.now() - this.#openedAt;
    if (since <= this.#thresholdMs) return;
    this.#warned = true;
    this.#logger.warn(
      {
        event: 'claim.stuck',
        lostAt: new Date(this.#openedAt).toISOString(),
        reason: this.#reason,
        emptyForMs: since,
      },
      'a pull answer was lost and only empty answers followed since: a command may be stuck PROCESSING on the platform until its own timeout; porter never learned its id and cannot report it; the seller can retry it from the store dashboard',
    );
  }

  /** A pull claimed a command: the platform holds nothing else of this server in PROCESSING. */
  claimed(): void {
    if (this.#openedAt === undefined) return;
    if (this.#warned) {
      this.#logger.info({ event: 'claim.released' }, 'pulls claim commands again: the platform released the stuck claim');
    }
    this.#openedAt = undefined;
    this.#warned = false;
  }
}
