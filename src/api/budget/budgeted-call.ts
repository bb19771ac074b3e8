import type { Logger } from 'pino';
import { RETRY_AFTER_MAX_MS, type Budget } from './budget.js';
import type { ApiClient, ApiRequest, ApiResponse } from '../wire/client.js';
import { RateLimitedError } from '../errors.js';
import { errorForAnswer } from '../answers/problem.js';
import { SerialLane } from '../../serial-lane.js';
import type { Route } from '../types.js';

interface BudgetedCallOptions {
  readonly client: ApiClient;
  readonly budget: Budget;
  /** Already names the server; each call's api.answered line is logged with it too. */
  readonly logger: Logger;
}

/**
 * How one server's calls reach the API, whatever they mean: each waits for the budget, calls to
 * one route go one at a time, every answer feeds the budget back, a 401 is sent once more with a
 * rotated token, and a 429 becomes a RateLimitedError after the budget has learned its
 * Retry-After. Resolves with any other answer; what it means is the caller's business.
 */
export class BudgetedCaller {
  readonly #o: BudgetedCallOptions;
  readonly #lanes: Record<Route, SerialLane> = { pull: new SerialLane(), done: new SerialLane(), fail: new SerialLane() };
  #rateLimited = 0;
  #warnedAbsurdRetryAfter = false;

  constructor(options: BudgetedCallOptions) {
    this.#o = options;
  }

  /** 429 answers so far. */
  get rateLimited(): number {
    return this.#rateLimited;
  }

  call(route: Route, request: Omit<ApiRequest, 'signal'>, signal: AbortSignal | undefined, onSend?: () => void): Promise<ApiResponse> {
    return this.#lanes[route].run(async () => {
      const { client, logger } = this.#o;
      let response = await this.#sendWithinBudget(route, request, signal, onSend);
      // A 401 never claims or settles anything, so the same request may go again with a rotated token.
      if (response.status === 401 && (await client.renewToken(response.tokenGeneration))) {
        logger.warn(
          { event: 'api.token.reread', route },
          'Seller API refused the token; a new token was found in its file: sending again with it',
        );
        response = await this.#sendWithinBudget(route, request, signal, onSend);
      }
      if (response.status !== 429) return response;
      throw this.#rateLimitedBy(route, request, response);
    }, signal);
  }

  /** Waits for the budget, sends, and feeds every answer but a 429 back to the budget. */
  async #sendWithinBudget(
    route: Route,
    request: Omit<ApiRequest, 'signal'>,
    signal: AbortSignal | undefined,
    onSend: (() => void) | undefined,
  ): Promise<ApiResponse> {
    const { budget, client, logger } = this.#o;
    // Taken at once when the budget allows, as an idle fleet's calls find it: no wait, no promise.
    signal?.throwIfAborted();
    if (!budget.tryTake(route)) await budget.acquire(route, signal);
    // The last check and the send's notice come after every wait, the connection's too.
    let sent = false;
    const beforeSend = () => {
      request.beforeSend?.();
      sent = true;
      onSend?.();
    };
    let response: ApiResponse;
    try {
      response = await client.send({ ...request, signal, beforeSend, logger });
    } catch (error) {
      // Never written (withheld, or abandoned while it waited for a connection): the call does not count.
      if (!sent) budget.withdraw(route);
      // No answer, but the platform may have counted the call: it counts until windowMs from now.
      else budget.observe(route, {});
      throw error;
    }
    if (response.status !== 429) budget.observe(route, { remaining: response.rateLimit.remaining, limit: response.rateLimit.limit });
    return response;
  }

  /** Feeds a 429 and its Retry-After to the budget; the error to throw. */
  #rateLimitedBy(route: Route, request: Omit<ApiRequest, 'signal'>, response: ApiResponse): unknown {
    const { budget, client, logger } = this.#o;
    this.#rateLimited++;
    const { remaining, limit } = response.rateLimit;
    const error = errorForAnswer(
      { status: 429, body: response.body, retryAfterMs: response.rateLimit.retryAfterMs },
      request.context,
      client.redact,
    );
    const retryAfterMs = error instanceof RateLimitedError ? error.retryAfterMs : undefined;
    budget.observe(route, { remaining, limit, retryAfterMs, limited: true });
    if (retryAfterMs !== undefined && retryAfterMs > RETRY_AFTER_MAX_MS && !this.#warnedAbsurdRetryAfter) {
      this.#warnedAbsurdRetryAfter = true;
      logger.warn(
        { event: 'api.retryafter.capped', route, retryAfterMs, pauseMs: RETRY_AFTER_MAX_MS },
        `Seller API asked for a Retry-After of ${Math.round(retryAfterMs / 1000)} s: porter waits ${RETRY_AFTER_MAX_MS / 1000} s at most and tries again (logged once)`,
      );
    }
    logger.warn(
      { event: 'api.ratelimited', route, retryAfterMs, pauseMs: budget.delayFor(route) },
      'Seller API answered 429: nothing more to this route until Retry-After has passed (at least 1 s)',
    );
    return error;
  }
}
