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

  /** Resolves true when woken, false when `sleep` finished first. Never rejects. */
  async sleepUnlessWoken(sleep: (signal: AbortSignal) => Promise<void>): Promise<boolean> {
    if (this.#pending) {
      this.#pending = false;
      return true;
    }
    const controller = new AbortController();
    let woken = false;
    this.#waiter = () => {
      woken = true;
      controller.abort();
    };
    try {
      await sleep(controller.signal);
    } catch {
      // aborted: either woken or the caller's own signal fired; the caller checks its own state.
    } finally {
      this.#waiter = undefined;
    }
    return woken;
  }
}
