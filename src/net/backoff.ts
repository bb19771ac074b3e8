export interface BackoffPolicy {
  /** Delay ceiling of the first retry. */
  readonly initialMs: number;
  /** The ceiling doubles per attempt up to this. */
  readonly maxMs: number;
}

export const DEFAULT_RECONNECT_BACKOFF: BackoffPolicy = { initialMs: 250, maxMs: 10_000 };

/**
 * Exponential backoff with "equal jitter" (half fixed, half random): many porters restarted with
 * their game servers do not reconnect in lockstep, yet no retry comes sooner than half its ceiling.
 * `attempt` counts from 1.
 */
export function backoffDelay(attempt: number, policy: BackoffPolicy, random: () => number = Math.random): number {
  const exponent = Math.min(Math.max(attempt, 1) - 1, 30);
  const ceiling = Math.min(policy.maxMs, policy.initialMs * 2 ** exponent);
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}
