import type { Clock } from './clock.js';

/**
 * A sleep that ends early when something worth acting on happens (a player joined, stop was
 * requested). Calling `wake()` while nobody sleeps is remembered for the next sleep, so a join
 * that lands between two idle waits is never lost.
 */
export class WakeSignal {
  #pending = false;
  #waiter: (() => void) | undefined;

  wake(): void {
    if (this.#waiter) this.#waiter();
    else this.#pending = true;
  }

  /**
   * Resolves true when woken, false when `ms` passed first. Never rejects. With a clock that has
   * timers (the system clock) it is one timer and one promise: an idle fleet sleeps a thousand
   * times a second, and an AbortController per sleep was a large share of what idling allocated
   * (docs/benchmarks.md, fleet). A clock with only `sleep` (the tests' fake clock) is aborted instead.
   */
  sleepUnlessWoken(clock: Clock, ms: number): Promise<boolean> {
    if (this.#pending) {
      this.#pending = false;
      return Promise.resolve(true);
    }
    if (clock.setTimer) return this.#sleepTimed(clock as Required<Clock>, ms);
    return this.#sleepAborted(clock, ms);
  }

  #sleepTimed(clock: Required<Clock>, ms: number): Promise<boolean> {
    return new Promise<boolean>((resolve) => {
      const cancel = clock.setTimer(() => {
        this.#waiter = undefined;
        resolve(false);
      }, ms);
      this.#waiter = () => {
        this.#waiter = undefined;
        cancel();
        resolve(true);
      };
    });
  }

  async #sleepAborted(clock: Clock, ms: number): Promise<boolean> {
    const controller = new AbortController();
    let woken = false;
    this.#waiter = () => {
      woken = true;
      controller.abort();
    };
    try {
      await clock.sleep(ms, controller.signal);
    } catch {
      // aborted: woken; the caller checks its own stop signal.
    } finally {
      this.#waiter = undefined;
    }
    return woken;
  }
}
