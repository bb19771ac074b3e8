/** A place in the line: `take` hands it the lane, and says false when it does not hold on to it. */
interface Turn {
  take(): boolean;
}

/**
 * Runs tasks one after another: one API call in flight per route (the budget's arithmetic needs
 * "the answer to my last call"), one RCON request in flight per connection. A waiter whose signal
 * aborts leaves the line at once; a task that has started always runs to its end before the next
 * begins. (p-queue's abort lets the next task start while the aborted one is still on the wire.)
 *
 * A free lane runs the task at once, with no promise or listener of its own: an idle fleet runs a
 * thousand lanes a second (docs/benchmarks.md, fleet). Only a caller that has to wait gets a turn
 * in the line.
 */
export class SerialLane {
  /** A task holds the lane, or it is being handed to the next in line. */
  #busy = false;
  /** Callers waiting for the lane, in order, and idle() markers, which take no turn. */
  #line: Turn[] = [];

  async run<T>(task: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    if (this.#busy) await this.#waitTurn(signal);
    else {
      signal?.throwIfAborted();
      this.#busy = true;
    }
    try {
      return await task();
    } finally {
      this.#handOn();
    }
  }

  /** Resolves once every task queued so far has finished. */
  idle(): Promise<void> {
    if (!this.#busy) return Promise.resolve();
    return new Promise<void>((resolve) => {
      this.#line.push({
        take: () => {
          resolve();
          return false;
        },
      });
    });
  }

  /** Gives the lane to the first caller still waiting, telling idle() markers on the way; or frees it. */
  #handOn(): void {
    while (this.#line.length > 0) {
      if (this.#line.shift()!.take()) return;
    }
    this.#busy = false;
  }

  #waitTurn(signal: AbortSignal | undefined): Promise<void> {
    signal?.throwIfAborted();
    return new Promise<void>((resolve, reject) => {
      let left = false;
      const onAbort = () => {
        left = true;
        reject(signal?.reason);
      };
      this.#line.push({
        take: () => {
          if (left) return false;
          signal?.removeEventListener('abort', onAbort);
          resolve();
          return true;
        },
      });
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }
}
