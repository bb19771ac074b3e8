/**
 * Exponential backoff with full jitter: many porters restarting after the same outage must not
 * hit the API in lockstep.
 */
export function backoffDelay(attempt: number, options: { baseMs?: number; maxMs?: number; random?: () => number } = {}): number {
  const { baseMs = 500, maxMs = 30_000, random = Math.random } = options;
  const ceiling = Math.min(maxMs, baseMs * 2 ** Math.min(attempt, 20));
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}
