import type { ApiResponse } from '../wire/client.js';
import type { CallContext } from '../errors.js';
import { parsePullBody } from '../wire/int64-json.js';
import { errorForAnswer } from './problem.js';
import { oversizedPullResult } from '../wire/pull-scan.js';
import type { PullResult } from '../types.js';

const isSuccess = (status: number) => status >= 200 && status < 300;

/**
 * What a pull's answer (any but a 429, which the budgeted call has turned into an error) means:
 * 204/205 and an empty 2xx are "nothing due", a 2xx with an id is a claim (or a claim too large to
 * keep, or one porter cannot report), anything else is thrown as the typed error of its status.
 */
export function pullResultOf(response: ApiResponse, context: CallContext, redact: (text: string) => string): PullResult {
  if (response.status === 204 || response.status === 205) return { kind: 'empty', status: response.status };
  if (!isSuccess(response.status)) {
    throw errorForAnswer({ status: response.status, body: response.body, retryAfterMs: response.rateLimit.retryAfterMs }, context, redact);
  }
  const parsed = response.oversized ? oversizedPullResult(response.oversized) : parsePullBody(response.body);
  return parsed.kind === 'empty' ? { kind: 'empty', status: response.status } : parsed;
}
