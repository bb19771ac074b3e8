import {
  ApiProblemError,
  ApiServerError,
  InvalidTokenError,
  PlanRequiredError,
  RateLimitedError,
  ReportRefusedError,
  ScopeMissingError,
  UnknownServerError,
  type CallContext,
  type ProblemFields,
  describeCall,
} from '../errors.js';
import type { PorterError } from '../../errors.js';

/** The parts of an HTTP answer the error mapping needs (see ApiResponse in client.ts). */
interface AnswerForProblem {
  readonly status: number;
  readonly body: string;
  /** From the Retry-After header, whole ms. */
  readonly retryAfterMs?: number | undefined;
}

const MAX_DETAIL = 300;

function stringField(record: Record<string, unknown>, key: string): string | undefined {
  const value = record[key];
  return typeof value === 'string' && value.length > 0 ? value : undefined;
}

/**
 * Reads application/problem+json leniently: any content type, any missing field. A proxy's HTML
 * error page gives a problem with only the HTTP status. Every text field is scrubbed of the token.
 */
export function parseProblem(answer: AnswerForProblem, redact: (text: string) => string): ProblemFields {
  let record: Record<string, unknown> = {};
  try {
    const value: unknown = JSON.parse(answer.body);
    if (value && typeof value === 'object' && !Array.isArray(value)) record = value as Record<string, unknown>;
  } catch {
    // not JSON: keep the status only
  }
  const detail = stringField(record, 'detail') ?? stringField(record, 'title');
  const scopes = Array.isArray(record.requiredScope) ? record.requiredScope.filter((s): s is string => typeof s === 'string') : undefined;
  const bodySeconds = typeof record.retryAfterSeconds === 'number' && record.retryAfterSeconds >= 0 ? record.retryAfterSeconds : undefined;
  const bodyMs = bodySeconds === undefined ? undefined : Math.ceil(bodySeconds * 1000);
  const candidates = [answer.retryAfterMs, bodyMs].filter((ms): ms is number => ms !== undefined);
  const apiCode = stringField(record, 'code');
  const traceId = stringField(record, 'traceId');
  return {
    status: answer.status,
    apiCode: apiCode === undefined ? undefined : redact(apiCode).slice(0, 100),
    detail: detail === undefined ? undefined : redact(detail).slice(0, MAX_DETAIL),
    requiredScope: scopes?.map((scope) => redact(scope).slice(0, 100)),
    // Both given: the longer wait is the one that cannot be early.
    retryAfterMs: candidates.length > 0 ? Math.max(...candidates) : undefined,
    traceId: traceId === undefined ? undefined : redact(traceId).slice(0, 100),
  };
}

function label(problem: ProblemFields): string {
  return `${problem.status} ${problem.apiCode ?? '(no code)'}`;
}

function trailer(problem: ProblemFields): string {
  const parts: string[] = [];
  if (problem.detail) parts.push(`API says: "${problem.detail}"`);
  if (problem.traceId) parts.push(`traceId ${problem.traceId}`);
  return parts.length > 0 ? ` [${parts.join('; ')}]` : '';
}

const NEW_TOKEN =
  'create a token with scope commands:execute in the store dashboard (Integrations > API) and give it to porter in api.token, api.tokenFile or PORTER_API_TOKEN';

/**
 * A 4xx answer to a report that sending it again cannot change. Not 401/403 (credentials, which a
 * new token fixes), 402 (the plan), 429 (the rate limit), 404/409 (already settled, handled by the
 * caller), nor 408/425, which ask for the same request again later.
 */
function refusedForGood(status: number): boolean {
  return status >= 400 && status < 500 && ![401, 402, 403, 404, 408, 409, 425, 429].includes(status);
}

/**
 * Maps a non-2xx answer to its typed error, on `status` and `code` only. 404 and 409 on done/fail
 * are not errors (the command is already settled) and are handled by the caller before this.
 */
export function errorForAnswer(answer: AnswerForProblem, context: CallContext, redact: (text: string) => string): PorterError {
  const problem = parseProblem(answer, redact);
  const tail = trailer(problem);
  const call = describeCall(context);
  const { status } = problem;

  if (status === 401) {
    return new InvalidTokenError(
      `Seller API rejected the token (${label(problem)}) on ${call}: it is missing, wrong, revoked or was regenerated; ${NEW_TOKEN}${tail}`,
      problem,
      context,
    );
  }
  if (status === 403 && problem.apiCode === 'INTEGRATION_SCOPE_MISSING') {
    const scopes = problem.requiredScope?.length ? problem.requiredScope.join(', ') : 'not listed';
    return new ScopeMissingError(
      `Seller API token lacks a scope (${label(problem)}, requiredScope: ${scopes}) on ${call}; ${NEW_TOKEN}${tail}`,
      problem,
      context,
    );
  }
  if (status === 402) {
    return new PlanRequiredError(
      `Seller API: the store's plan does not include API access (${label(problem)}) on ${call}; porter keeps running and retries slowly; upgrade the plan in the store dashboard${tail}`,
      problem,
      context,
    );
  }
  if (status === 404 && context.route === 'pull') {
    return new UnknownServerError(
      `Seller API does not know server ${context.serverId ?? '?'} (${label(problem)}): check servers[].id against the server list in the store dashboard (and api.baseUrl / api.routes.pull if you changed them)${tail}`,
      problem,
      context,
    );
  }
  if (status === 429) {
    const wait = problem.retryAfterMs === undefined ? 'no Retry-After given' : `retry after ${problem.retryAfterMs} ms`;
    return new RateLimitedError(
      `Seller API rate limit reached (${label(problem)}) on ${call}: ${wait}; porter sends nothing to this route until then. If this repeats, lower api.budget.share to leave room for the official connector${tail}`,
      problem,
      context,
    );
  }
  if (context.route !== 'pull' && context.route !== 'servers' && refusedForGood(status)) {
    return new ReportRefusedError(
      `Seller API refused the report (${label(problem)}) on ${call}: no retry can change this answer, so porter gives this report up, records it in the delivery history and goes on with the next command; settle the command in the store dashboard${tail}`,
      problem,
      context,
    );
  }
  if (status >= 500) {
    return new ApiServerError(`Seller API failed (${label(problem)}) on ${call}; porter retries with backoff${tail}`, problem, context);
  }
  const hint =
    status >= 300 && status < 400
      ? 'redirects are not followed: check api.baseUrl (https, exact host)'
      : 'porter retries with backoff; if it persists, check api.baseUrl and api.routes';
  return new ApiProblemError(`Seller API answered ${label(problem)} on ${call}: ${hint}${tail}`, problem, context);
}
