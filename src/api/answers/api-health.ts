import type { Logger } from 'pino';
import { messageOf } from '../../errors.js';
import { backoffDelay, type BackoffPolicy } from '../../net/backoff.js';
import { PlanRequiredError, RateLimitedError } from '../errors.js';

const PLAN_RETRY_MS = 60_000;
/** API trouble (5xx, timeouts, resets) and reports not yet accepted: 0.5 s doubling up to 30 s. */
const API_BACKOFF: BackoffPolicy = { initialMs: 500, maxMs: 30_000 };

/**
 * The API's last answers to one server's calls, for /healthz (when a call last succeeded, and why
 * the last one failed), and what a failed call means for the next: how long to pause. The pulls
 * of the delivery loop and the reports of its reporter share one.
 */
export class ApiHealth {
  readonly #logger: Logger;
  lastSuccessAt: number | undefined;
  lastError: string | undefined;

  /** `logger` already names the server. */
  constructor(logger: Logger) {
    this.#logger = logger;
  }

  succeeded(now: number): void {
    this.lastSuccessAt = now;
    this.lastError = undefined;
  }

  /** What /healthz shows of an API failure: porter's own message without the API's free-text `detail`, which it does not control. */
  failed(error: unknown): void {
    const message = messageOf(error);
    const detail = (error as { detail?: unknown }).detail;
    this.lastError = typeof detail === 'string' && detail.length > 0 ? message.split(detail).join('(detail omitted)') : message;
  }

  /** How long to pause after a failed API call (a pull's or a report's), noting it for /healthz. */
  pauseAfter(error: unknown, attempt: number): number {
    this.failed(error);
    // The budget already knows the Retry-After (at least its floor) and holds the next call.
    if (error instanceof RateLimitedError) return 0;
    if (error instanceof PlanRequiredError) {
      this.#logger.error(
        { event: 'api.plan.missing', err: messageOf(error) },
        `the store's plan does not include API access (402): retrying every ${PLAN_RETRY_MS / 1000} s`,
      );
      return PLAN_RETRY_MS;
    }
    return backoffDelay(attempt + 1, API_BACKOFF);
  }
}
