import type { Logger } from 'pino';
import type { Budget, RouteBudgetSnapshot } from './budget/budget.js';
import { BudgetedCaller } from './budget/budgeted-call.js';
import type { Clock } from '../clock.js';
import { ClaimGapWatch } from './answers/claim-gap.js';
import type { ApiClient, ApiResponse } from './wire/client.js';
import { ApiTransportError, ReportRefusedError, type CallContext } from './errors.js';
import { truncateReason } from './answers/fail-reason.js';
import { errorForAnswer, parseProblem } from './answers/problem.js';
import { pullResultOf } from './answers/pull-answer.js';
import type { PullResult, ReportResult, Route, ServerApi } from './types.js';

interface ServerApiOptions {
  readonly client: ApiClient;
  readonly serverId: string;
  readonly budget: Budget;
  readonly clock: Clock;
  /** Already names the server (`server`): the lines logged about its calls carry no id of their own. */
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
 * The Seller API as one configured server sees it: calls go through the budgeted caller
 * (budget, one call per route at a time, token rotation, 429s), and answers become PullResult /
 * ReportResult or typed errors (src/api/errors.ts), counted for /metrics.
 */
export function createServerApi(options: ServerApiOptions): ServerApi & { stats(): ServerApiStats } {
  return new ServerCalls(options);
}

class ServerCalls implements ServerApi {
  readonly serverId: string;
  readonly #o: ServerApiOptions;
  readonly #caller: BudgetedCaller;
  readonly #claimGap: ClaimGapWatch;
  readonly #pulls = { claimed: 0, empty: 0, busy204: 0, unusable: 0, error: 0 };
  readonly #reports = { accepted: 0, alreadySettled: 0, refused: 0, error: 0 };
  /** The pull's path and context are the same for every pull of this server: made once, at the first. */
  #pullPath: string | undefined;
  readonly #pullContext: CallContext;

  constructor(options: ServerApiOptions) {
    const { client, serverId, budget, logger } = options;
    this.serverId = serverId;
    this.#o = options;
    this.#caller = new BudgetedCaller({ client, budget, logger });
    this.#claimGap = new ClaimGapWatch({ clock: options.clock, logger, thresholdMs: options.claimGapWarnMs });
    this.#pullContext = { route: 'pull', serverId };
  }

  async pull(onlineIdentifiers: readonly string[], signal?: AbortSignal, beforeSend?: () => void): Promise<PullResult> {
    const { client, serverId } = this.#o;
    const context = this.#pullContext;
    let sent = false;
    let result: PullResult;
    try {
      const request = {
        method: 'POST',
        path: (this.#pullPath ??= client.routes.pull(serverId)),
        json: { onlineIdentifiers },
        context,
        scanOversized: true,
        beforeSend,
      } as const;
      const response = await this.#caller.call('pull', request, signal, () => {
        sent = true;
      });
      result = pullResultOf(response, context, client.redact);
    } catch (error) {
      // Withheld or abandoned before it was sent: nothing happened on the platform, nothing to count.
      if (!sent && !(error instanceof ApiTransportError)) throw error;
      this.#pulls.error++;
      if (error instanceof ApiTransportError && error.maybeProcessed) this.#claimGap.lost(`${error.failure}: ${error.message}`);
      else if (sent && signal?.aborted && !(error instanceof ApiTransportError))
        this.#claimGap.lost('the pull was aborted before its answer arrived');
      throw error;
    }
    this.#count(result);
    return result;
  }

  done(id: string, signal?: AbortSignal): Promise<ReportResult> {
    return this.#report('done', id, undefined, signal);
  }

  fail(id: string, reason: string, signal?: AbortSignal): Promise<ReportResult> {
    return this.#report('fail', id, reason, signal);
  }

  stats(): ServerApiStats {
    return {
      pulls: { ...this.#pulls },
      reports: { ...this.#reports },
      rateLimited: this.#caller.rateLimited,
      claimGapOpen: this.#claimGap.open,
      budget: this.#o.budget.snapshot(),
    };
  }

  #count(result: PullResult): void {
    switch (result.kind) {
      case 'oversized':
        // Not logged here: the loop reports the claim failed with its size (delivery.failed).
        this.#pulls.claimed++;
        this.#claimGap.claimed();
        break;
      case 'claimed':
        this.#pulls.claimed++;
        this.#claimGap.claimed();
        break;
      case 'empty':
        if (result.status === 204 && this.#claimGap.open) this.#pulls.busy204++;
        else this.#pulls.empty++;
        this.#claimGap.empty();
        break;
      case 'unusable':
        this.#pulls.unusable++;
        // Logged by the loop, which decides what follows (pull.unusable).
        this.#claimGap.lost(result.reason);
        break;
    }
  }

  async #report(route: 'done' | 'fail', id: string, reason: string | undefined, signal?: AbortSignal): Promise<ReportResult> {
    const { client, serverId } = this.#o;
    const context: CallContext = { route, serverId, commandId: id };
    const path = route === 'done' ? client.routes.done(serverId, id) : client.routes.fail(serverId, id);
    // The reason can hold a game answer or a script's stderr: never let the token through.
    const json = route === 'fail' ? { error: truncateReason(client.redact(reason ?? '')) } : undefined;
    let response: ApiResponse;
    try {
      response = await this.#caller.call(route, { method: 'POST', path, json, context }, signal);
    } catch (error) {
      this.#reports.error++;
      throw error;
    }
    if (isSuccess(response.status)) {
      this.#reports.accepted++;
      return 'accepted';
    }
    if (response.status === 404 || response.status === 409) {
      this.#reports.alreadySettled++;
      // Logged by the reporter, which decides what follows (report.settled).
      const { apiCode } = parseProblem({ status: response.status, body: response.body }, client.redact);
      return { kind: 'alreadySettled', status: response.status, apiCode };
    }
    const error = errorForAnswer(
      { status: response.status, body: response.body, retryAfterMs: response.rateLimit.retryAfterMs },
      context,
      client.redact,
    );
    if (error instanceof ReportRefusedError) this.#reports.refused++;
    else this.#reports.error++;
    throw error;
  }
}
