import { performance } from 'node:perf_hooks';

/**
 * Time is passed in, never read from globals, so the budget and the delivery loop can be tested
 * with a fake clock.
 */
export interface Clock {
  /** Milliseconds since the epoch; never goes backwards (see systemClock). */
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
 * A deadline that decides an exchange's outcome: `onExpiry` runs after `ms` unless the returned
 * cancel is called first. Every deadline that can turn an answer into "no answer" goes through
 * here (docs/design.md#frozen-and-thawed).
 *
 * It yields to an answer that has already arrived. After a freeze (a paused VM or container,
 * `docker pause`, SIGSTOP, a long GC pause) an expired timer and an answer that came in meanwhile
 * are ready at the same moment, and Node runs expired timers before it reads sockets: a plain
 * timer would decide "no answer" with the answer sitting unread in the socket. So with a clock
 * that has timers the expiry does not decide at once: it waits for the next check phase
 * (setImmediate), which comes after the next poll phase. That poll phase reads whatever is
 * waiting and runs its handlers, and the microtasks they queue; an exchange they settle calls
 * cancel, and the decision never runs. One timer and, only once it expired, one immediate: cheap
 * on a hot path (one per RCON command). undici yields its connect timeout the same way.
 *
 * A clock with only `sleep` (the tests' fake clock) decides when its sleep resolves: its time moves
 * only when a test moves it, and a test decides itself what has arrived by then.
 */
export function startDeadline(clock: Clock, ms: number, onExpiry: () => void): () => void {
  if (clock.setTimer) {
    let decision: NodeJS.Immediate | undefined;
    const cancelTimer = clock.setTimer(() => {
      decision = setImmediate(onExpiry);
    }, ms);
    return () => {
      cancelTimer();
      if (decision !== undefined) clearImmediate(decision);
    };
  }
  const cancel = new AbortController();
  clock.sleep(ms, cancel.signal).then(onExpiry, () => undefined);
  return () => cancel.abort(DEADLINE_CANCELLED);
}

const DEADLINE_CANCELLED = Symbol('deadline cancelled');

/** setTimeout's limit: a longer delay fires after 1 ms, with a TimeoutOverflowWarning. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** Like setTimeout, for any delay: a delay beyond MAX_TIMER_MS runs as a chain of timers. */
function setLongTimer(fn: () => void, ms: number): () => void {
  // The common case, one timer and its cancel: every RCON command and API call sets a deadline.
  if (ms <= MAX_TIMER_MS) {
    const single = setTimeout(fn, Number.isNaN(ms) ? 0 : Math.max(0, ms));
    return () => clearTimeout(single);
  }
  let timer: NodeJS.Timeout;
  const arm = (left: number) => {
    timer = left > MAX_TIMER_MS ? setTimeout(() => arm(left - MAX_TIMER_MS), MAX_TIMER_MS) : setTimeout(fn, left);
  };
  arm(Number.isNaN(ms) ? 0 : Math.max(0, ms));
  return () => clearTimeout(timer);
}

/**
 * The process's clock. `now` reads the wall clock once, at process start, and moves on with the
 * monotonic clock from there: the wall clock may step either way (NTP, a VM thawed after a pause),
 * and a step must neither block a route for its size (backwards) nor let calls through early
 * (forwards). Whole ms, so durations and timestamps built from it stay integers.
 */
export const systemClock: Clock = {
  now: () => Math.floor(performance.timeOrigin + performance.now()),
  setTimer: setLongTimer,
  sleep: (ms, signal) =>
    new Promise<void>((resolve, reject) => {
      if (signal?.aborted) {
        reject(signal.reason);
        return;
      }
      const onAbort = () => {
        cancel();
        reject(signal?.reason);
      };
      const cancel = setLongTimer(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      }, ms);
      signal?.addEventListener('abort', onAbort, { once: true });
    }),
};
