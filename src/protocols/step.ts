import { startDeadline, type Clock } from '../clock.js';

/** What a connection tells `stepWithin` about itself; the step's handlers are its own type `H`. */
export interface StepHost<H> {
  readonly clock: Clock;
  /** Why the connection ended, if it did: a step started then fails at once with it. */
  endReason(): Error | undefined;
  /**
   * Receives the running step's handlers and what to do when `signal` aborts, and undefined once
   * it settles. The host listens to the signal itself, so a connection whose steps all carry the
   * same long-lived signal (a player-list watcher's) adds one listener, not one per step.
   */
  track(handlers: H | undefined, signal?: AbortSignal, onAbort?: () => void): void;
}

/**
 * One outstanding step of a stream connection (connecting, a login, a command's answer) with a
 * deadline and an abort signal: `start` writes whatever it needs and returns the handlers the
 * connection routes what it reads to until the step settles. RCON and telnet connections both
 * run their steps through this, one at a time.
 */
export function stepWithin<T, H>(
  host: StepHost<H>,
  timeoutMs: number,
  signal: AbortSignal | undefined,
  what: string,
  start: (resolve: (value: T) => void, reject: (reason: Error) => void) => H,
): Promise<T> {
  return new Promise<T>((resolvePromise, rejectPromise) => {
    let settled = false;
    let cancelDeadline = (): void => {};
    const finish = () => {
      settled = true;
      host.track(undefined);
      cancelDeadline();
    };
    const resolve = (value: T) => {
      if (settled) return;
      finish();
      resolvePromise(value);
    };
    const reject = (reason: Error) => {
      if (settled) return;
      finish();
      rejectPromise(reason);
    };
    const onAbort = () => reject(new Error(`cancelled while ${what}`, { cause: signal?.reason }));
    const ended = host.endReason();
    if (ended) {
      reject(ended);
      return;
    }
    cancelDeadline = startDeadline(host.clock, timeoutMs, () => reject(new Error(`timed out after ${timeoutMs} ms ${what}`)));
    host.track(start(resolve, reject), signal, onAbort);
    if (signal?.aborted) onAbort();
  });
}
