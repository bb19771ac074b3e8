import { startDeadline, type Clock } from './clock.js';

/**
 * A signal that aborts when any of `signals` does, released when the caller is done with it.
 *
 * Not `AbortSignal.any`: its composite stays referenced by each long-lived source signal (the
 * daemon's stop signals, an executor's lifetime) until that source is collected (nodejs/node#55351),
 * so one composite per command or per pull is a slow leak in a daemon that runs for months. Here
 * the listeners are removed on `release()`, and nothing of the call outlives it.
 */
export function linkSignals(...signals: ReadonlyArray<AbortSignal | undefined>): { readonly signal: AbortSignal; release(): void } {
  const controller = new AbortController();
  const sources = signals.filter((s): s is AbortSignal => s !== undefined);
  const aborted = sources.find((s) => s.aborted);
  if (aborted) {
    controller.abort(aborted.reason);
    return { signal: controller.signal, release: () => undefined };
  }
  const listeners = sources.map((source) => {
    const onAbort = () => controller.abort(source.reason);
    source.addEventListener('abort', onAbort, { once: true });
    return () => source.removeEventListener('abort', onAbort);
  });
  return { signal: controller.signal, release: () => listeners.forEach((remove) => remove()) };
}

/** A signal that aborts at a deadline or when the caller's signal does; see withDeadline. */
interface DeadlineSignal {
  readonly signal: AbortSignal;
  /** True once the deadline passed (or expire() was called), whether or not the caller had aborted first. */
  readonly timedOut: boolean;
  /** Ends the wait now, as the deadline would: for a second deadline on the same exchange. */
  readonly expire: () => void;
  /** Cancels the deadline and lets go of the caller's signal; call it when the exchange is over. */
  release(): void;
}

/**
 * A signal for one exchange: it aborts when `ms` pass on `clock` (startDeadline, which yields to an
 * answer already waiting after a freeze), with `reason()` as its reason, or when `caller` aborts,
 * with the caller's reason. Nothing of it outlives `release()` (see linkSignals).
 */
export function withDeadline(
  clock: Clock,
  ms: number,
  caller: AbortSignal | undefined,
  reason: () => unknown = () => undefined,
): DeadlineSignal {
  const deadline = new AbortController();
  const linked = linkSignals(caller, deadline.signal);
  let timedOut = false;
  const expire = () => {
    timedOut = true;
    deadline.abort(reason());
  };
  const cancel = startDeadline(clock, ms, expire);
  return {
    signal: linked.signal,
    get timedOut() {
      return timedOut;
    },
    expire,
    release: () => {
      cancel();
      linked.release();
    },
  };
}

/** Waits for a shared promise, but lets this caller leave early (rejecting with its reason) when its own signal aborts. */
export function untilAborted<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}
