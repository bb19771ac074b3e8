import { ConfigError, CredentialsError, PorterError } from '../errors.js';
import type { Route } from './types.js';

/**
 * Typed errors of the Seller API. Every class is decided on the HTTP status and the problem's
 * `code` only (the Seller API's error rules), never on `detail`, which is localized text for people.
 *
 * `code` on every class is porter's own stable error code (E_API_…), like every PorterError;
 * the platform's problem code is `apiCode`.
 */

/** What an application/problem+json answer told us. Fields absent from the body are undefined. */
export interface ProblemFields {
  readonly status: number;
  readonly apiCode: string | undefined;
  /** Already scrubbed of the token and shortened; for people, never for decisions. */
  readonly detail: string | undefined;
  readonly requiredScope: readonly string[] | undefined;
  /** From the `Retry-After` header or `retryAfterSeconds`, whichever is longer; whole ms. */
  readonly retryAfterMs: number | undefined;
  readonly traceId: string | undefined;
}

/** Where the failing call went; used to write messages that name what is wrong. */
export interface CallContext {
  readonly route: Route | 'servers';
  readonly serverId?: string;
  readonly commandId?: string;
}

/** "pull for server X (command N)": where a failing call went, for messages. */
export function describeCall(context: CallContext): string {
  const parts: string[] = [context.route];
  if (context.serverId !== undefined) parts.push(`for server ${context.serverId}`);
  if (context.commandId !== undefined) parts.push(`(command ${context.commandId})`);
  return parts.join(' ');
}

/** The fields every API error carries. */
interface ProblemError extends ProblemFields {
  readonly context: CallContext;
}

/**
 * `Base` with the problem fields, taken by the constructor. The exit code comes from the base
 * class (401/403 CredentialsError, 404 ConfigError: exit 78), so the problem fields cannot live in
 * one shared base class: each API error class extends this made from its own base.
 */
function withProblem<T extends PorterError>(
  Base: new (message: string) => T,
): new (message: string, problem: ProblemFields, context: CallContext) => T & ProblemError {
  class WithProblem extends (Base as new (message: string) => PorterError) {
    constructor(message: string, problem: ProblemFields, context: CallContext) {
      super(message);
      Object.assign(this, {
        status: problem.status,
        apiCode: problem.apiCode,
        detail: problem.detail,
        requiredScope: problem.requiredScope,
        retryAfterMs: problem.retryAfterMs,
        traceId: problem.traceId,
        context,
      });
    }
  }
  return WithProblem as unknown as new (message: string, problem: ProblemFields, context: CallContext) => T & ProblemError;
}

/** A non-2xx answer porter has no more specific class for (400, 405, an unexpected 404, 3xx…). */
export class ApiProblemError extends withProblem(PorterError) {
  override readonly code: string = 'E_API_PROBLEM';
}

/** 5xx: the platform is having trouble; back off with jitter and keep going. */
export class ApiServerError extends ApiProblemError {
  override readonly code = 'E_API_SERVER';
}

/**
 * A done/fail report the API refuses for good (a 4xx that no retry can change: 400, 422, …): porter
 * records it, gives it up and moves on, so that one report never holds up a server's deliveries.
 */
export class ReportRefusedError extends ApiProblemError {
  override readonly code = 'E_API_REPORT_REFUSED';
}

/** 402 PLAN_FEATURE_REQUIRED: not fatal; the daemon keeps running and retries slowly. */
export class PlanRequiredError extends ApiProblemError {
  override readonly code = 'E_API_PLAN_REQUIRED';
}

/** 429: nothing more to this route until `retryAfterMs` has passed (the budget enforces it). */
export class RateLimitedError extends ApiProblemError {
  override readonly code = 'E_API_RATE_LIMITED';
}

/** 401: the token is missing, wrong, deleted or regenerated. Exit 78. */
export class InvalidTokenError extends withProblem(CredentialsError) {
  override readonly code = 'E_API_INVALID_TOKEN';
}

/** 403 INTEGRATION_SCOPE_MISSING: the token lacks a scope; `requiredScope` lists them. Exit 78. */
export class ScopeMissingError extends withProblem(CredentialsError) {
  override readonly code = 'E_API_SCOPE_MISSING';
}

/** 404 on pull: the store does not know `servers[].id` (or the pull route is wrong). Exit 78. */
export class UnknownServerError extends withProblem(ConfigError) {
  override readonly code = 'E_API_UNKNOWN_SERVER';
}

export type TransportFailure = 'timeout' | 'reset' | 'connect' | 'open-files' | 'tls' | 'protocol' | 'closed' | 'body-too-large' | 'other';

/**
 * No usable HTTP answer: timeout, reset, refused, DNS, TLS. `maybeProcessed` is true whenever the
 * request may have reached the API (a timeout or a reset after connecting): for a pull that means
 * a command may have been claimed without porter learning its id (the claim gap, docs/design.md#delivery-semantics).
 * The `cause` is a scrubbed copy of the underlying error (name, code, message), never the original,
 * because undici errors can carry request headers.
 */
export class ApiTransportError extends PorterError {
  override readonly code = 'E_API_TRANSPORT';
  readonly failure: TransportFailure;
  readonly maybeProcessed: boolean;
  readonly context: CallContext;
  constructor(message: string, options: { failure: TransportFailure; maybeProcessed: boolean; context: CallContext; cause?: Error }) {
    super(message, options.cause ? { cause: options.cause } : undefined);
    this.failure = options.failure;
    this.maybeProcessed = options.maybeProcessed;
    this.context = options.context;
  }
}
