import type { Logger } from 'pino';
import { RETRY_AFTER_MAX_MS, type Budget, type RouteBudgetSnapshot } from './budget.js';
import type { Clock } from '../clock.js';
import { ClaimGapWatch } from './claim-gap.js';
import type { ApiClient, ApiRequest, ApiResponse } from './client.js';
import { ApiTransportError, RateLimitedError, ReportRefusedError, type CallContext } from './errors.js';
import { truncateReason } from './fail-reason.js';
import { parsePullBody } from './int64-json.js';
import { oversizedPullResult } from './pull-scan.js';
import { errorForAnswer } from './problem.js';
import { SerialLane } from '../serial-lane.js';
import type { PullResult, ReportResult, Route, ServerApi } from './types.js';

export interface ServerApiOptions {
  readonly client: ApiClient;
  readonly serverId: string;
  readonly budget: Budget;
  readonly clock: Clock;
  readonly logger: Logger;
  /** How long only empty pulls may follow a lost pull answer before the claim-gap warning. Default 60 s. */
  readonly claimGapWarnMs?: number;
}

export interface ServerApiStats {
  /** busy204: a 204 while a lost pull answer may hold a claim on the platform; empty: every other "nothing due". */
  readonly pulls: {
    readonly claimed: number;
    readonly empty: number;
    readonly busy204: number;
    readonly unusable: number;
    readonly error: number;
  };
  /** refused: a 4xx no retry can change; the loop gives that report up. */
  readonly reports: { readonly accepted: number; readonly alreadySettled: number; readonly refused: number; readonly error: number };
  readonly rateLimited: number;
  readonly claimGapOpen: boolean;
  readonly budget: Record<Route, RouteBudgetSnapshot>;
}

const isSuccess = (status: number) => status >= 200 && status < 300;

/**
 * The Seller API as one configured server sees it: every call waits for the budget, calls to one
 * route go one at a time, every answer feeds the budget, and answers become PullResult /
 * ReportResult or typed errors (src/api/errors.ts).
 */
export function createServerApi(options: ServerApiOptions): ServerApi & { stats(): ServerApiStats } {
  const { client, serverId, budget, logger } = options;
  const claimGap = new ClaimGapWatch({ clock: options.clock, logger, serverId, thresholdMs: options.claimGapWarnMs });
  const lanes: Record<Route, SerialLane> = { pull: new SerialLane(), done: new SerialLane(), fail: new SerialLane() };
  const pulls = { claimed: 0, empty: 0, busy204: 0, unusable: 0, error: 0 };
  const reports = { accepted: 0, alreadySettled: 0, refused: 0, error: 0 };
  let rateLimited = 0;
  let warnedAbsurdRetryAfter = false;

  /**
   * Waits for the budget, sends, and feeds every answer but a 429 back to the budget (the caller
   * feeds a 429 back, with its Retry-After).
   */
  async function sendWithinBudget(
    route: Route,
    request: Omit<ApiRequest, 'signal'>,
    signal: AbortSignal | undefined,
    onSend: (() => void) | undefined,
  ): Promise<ApiResponse> {
    await budget.acquire(route, signal);
    onSend?.();
    let response: ApiResponse;
    try {
      response = await client.send({ ...request, signal });
    } catch (error) {
      // No answer, but the platform may have counted the call: it counts until windowMs from now.
      budget.observe(route, {});
      throw error;
    }
    if (response.status !== 429) budget.observe(route, { remaining: response.rateLimit.remaining, limit: response.rateLimit.limit });
    return response;
  }

  /** Budget, send, feed the budget back. Resolves with any non-429 answer. */
  function call(
    route: Route,
    request: Omit<ApiRequest, 'signal'>,
    signal: AbortSignal | undefined,
    onSend?: () => void,
  ): Promise<ApiResponse> {
    return lanes[route].run(async () => {
      let response = await sendWithinBudget(route, request, signal, onSend);
      // A 401 never claims or settles anything, so the same request may go again with a rotated token.
      if (response.status === 401 && (await client.renewToken(response.tokenGeneration))) {
        logger.warn({ serverId, route }, 'Seller API refused the token; a new token was found in its file: sending again with it');
        response = await sendWithinBudget(route, request, signal, onSend);
      }
      const { remaining, limit } = response.rateLimit;
      if (response.status !== 429) return response;
      rateLimited++;
      const error = errorForAnswer(
        { status: 429, body: response.body, retryAfterMs: response.rateLimit.retryAfterMs },
        request.context,
        client.redact,
      );
      const retryAfterMs = error instanceof RateLimitedError ? error.retryAfterMs : undefined;
      budget.observe(route, { remaining, limit, retryAfterMs, limited: true });
      if (retryAfterMs !== undefined && retryAfterMs > RETRY_AFTER_MAX_MS && !warnedAbsurdRetryAfter) {
        warnedAbsurdRetryAfter = true;
        logger.warn(
          { serverId, route, retryAfterMs, pauseMs: RETRY_AFTER_MAX_MS },
          `Seller API asked for a Retry-After of ${Math.round(retryAfterMs / 1000)} s: porter waits ${RETRY_AFTER_MAX_MS / 1000} s at most and tries again (logged once)`,
        );
      }
      logger.warn(
        { serverId, route, retryAfterMs, pauseMs: budget.delayFor(route) },
        'Seller API answered 429: nothing more to this route until Retry-After has passed (at least 1 s)',
      );
      throw error;
    }, signal);
  }

  async function pull(onlineIdentifiers: readonly string[], signal?: AbortSignal): Promise<PullResult> {
    const context: CallContext = { route: 'pull', serverId };
    let sent = false;
    let response: ApiResponse;
    try {
      response = await call(
        'pull',
        { method: 'POST', path: client.routes.pull(serverId), json: { onlineIdentifiers }, context, scanOversized: true },
        signal,
        () => {
          sent = true;
        },
      );
    } catch (error) {
      pulls.error++;
      if (error instanceof ApiTransportError && error.maybeProcessed) claimGap.lost(`${error.failure}: ${error.message}`);
      else if (sent && signal?.aborted && !(error instanceof ApiTransportError))
        claimGap.lost('the pull was aborted before its answer arrived');
      throw error;
    }

    let result: PullResult;
    if (response.status === 204 || response.status === 205) result = { kind: 'empty', status: response.status };
    else if (isSuccess(response.status)) {
      const parsed = response.oversized ? oversizedPullResult(response.oversized) : parsePullBody(response.body);
      result = parsed.kind === 'empty' ? { kind: 'empty', status: response.status } : parsed;
    } else {
      pulls.error++;
      throw errorForAnswer(
        { status: response.status, body: response.body, retryAfterMs: response.rateLimit.retryAfterMs },
        context,
        client.redact,
      );
    }

    switch (result.kind) {
      case 'oversized':
        logger.warn(
          { serverId, commandId: result.id, reason: result.reason },
          'pull answer too large to keep: the claim is reported failed',
        );
        pulls.claimed++;
        claimGap.claimed();
        break;
      case 'claimed':
        pulls.claimed++;
        claimGap.claimed();
        break;
      case 'empty':
        if (result.status === 204 && claimGap.open) pulls.busy204++;
        else pulls.empty++;
        claimGap.empty();
        break;
      case 'unusable':
        pulls.unusable++;
        claimGap.lost(result.reason);
        logger.warn({ serverId, reason: result.reason }, 'pull answer unusable: a command may have been claimed that porter cannot report');
        break;
    }
    return result;
  }

  async function report(route: 'done' | 'fail', id: string, reason: string | undefined, signal?: AbortSignal): Promise<ReportResult> {
    const context: CallContext = { route, serverId, commandId: id };
    const path = route === 'done' ? client.routes.done(serverId, id) : client.routes.fail(serverId, id);
    // The reason can hold a game answer or a script's stderr: never let the token through.
    const json = route === 'fail' ? { error: truncateReason(client.redact(reason ?? '')) } : undefined;
    let response: ApiResponse;
    try {
      response = await call(route, { method: 'POST', path, json, context }, signal);
    } catch (error) {
      reports.error++;
      throw error;
    }
    if (isSuccess(response.status)) {
      reports.accepted++;
      return 'accepted';
    }
    if (response.status === 404 || response.status === 409) {
      reports.alreadySettled++;
      const problem = errorForAnswer({ status: response.status, body: response.body }, context, client.redact);
      logger.info(
        { serverId, commandId: id, route, status: response.status, apiCode: 'apiCode' in problem ? problem.apiCode : undefined },
        'report answered 404/409: the platform already settled this command (or no longer has it); moving on',
      );
      return 'alreadySettled';
    }
    const error = errorForAnswer(
      { status: response.status, body: response.body, retryAfterMs: response.rateLimit.retryAfterMs },
      context,
      client.redact,
    );
    if (error instanceof ReportRefusedError) reports.refused++;
    else reports.error++;
    throw error;
  }

  return {
    serverId,
    pull,
    done: (id, signal) => report('done', id, undefined, signal),
    fail: (id, reason, signal) => report('fail', id, reason, signal),
    stats: () => ({
      pulls: { ...pulls },
      reports: { ...reports },
      rateLimited,
      claimGapOpen: claimGap.open,
      budget: budget.snapshot(),
    }),
  };
}
