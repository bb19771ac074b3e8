/**
 * Time is passed in, never read from globals, so the budget and the delivery loop can be tested
 * with a fake clock.
 */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Resolves after `ms`, or rejects with the signal's reason when it aborts first. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /**
   * Calls `fn` after `ms` unless the returned cancel is called first. Optional: `startDeadline`
   * falls back to `sleep`, so a test clock only needs `sleep`.
   */
  setTimer?(fn: () => void, ms: number): () => void;
}

/**
 * A deadline on a hot path (one per RCON command): with the system clock it costs one timer, not
 * an AbortController and a promise rejected every time the deadline is cancelled.
 */
export function startDeadline(clock: Clock, ms: number, onExpiry: () => void): () => void {
  if (clock.setTimer) return clock.setTimer(onExpiry, ms);
  const cancel = new AbortController();
  clock.sleep(ms, cancel.signal).then(onExpiry, () => undefined);
  return () => cancel.abort(DEADLINE_CANCELLED);
}

const DEADLINE_CANCELLED = Symbol('deadline cancelled');

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimer: (fn, ms) => {
    const timer = setTimeout(fn, Math.max(0, ms));
    return () => clearTimeout(timer);
  },
  sleep: (ms, signal) =>
    new Promise<void>((resolve, reject) => {
      if (signal?.aborted) {
        reject(signal.reason);
        return;
      }
      const onAbort = () => {
        clearTimeout(timer);
        reject(signal?.reason);
      };
      const timer = setTimeout(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      }, Math.max(0, ms));
      signal?.addEventListener('abort', onAbort, { once: true });
    }),
};
