import { untilAborted } from './abort.js';

/**
 * Runs tasks one after another: one API call in flight per route (the budget's arithmetic needs
 * "the answer to my last call"), one RCON request in flight per connection. A waiter whose signal
 * aborts leaves the line at once; a task that has started always runs to its end before the next
 * begins. (p-queue's abort lets the next task start while the aborted one is still on the wire.)
 */
export class SerialLane {
  #tail: Promise<void> = Promise.resolve();
  /** Tasks queued or running; 0 means the lane is free. */
  #busy = 0;

  async run<T>(task: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    const previous = this.#tail;
    const wasFree = this.#busy === 0;
    this.#busy++;
    let release!: () => void;
    const mine = new Promise<void>((resolve) => {
      release = () => {
        this.#busy--;
        resolve();
      };
    });
    this.#tail = previous.then(() => mine);
    try {
      // A free lane has nothing to wait behind: no abort listener on the caller's long-lived
      // signal (an idle fleet runs a thousand lanes a second, docs/benchmarks.md, fleet).
      if (wasFree) {
        await previous;
        signal?.throwIfAborted();
      } else await untilAborted(previous, signal);
    } catch (error) {
      release();
      throw error;
    }
    try {
      return await task();
    } finally {
      release();
    }
  }

  /** Resolves once every task queued so far has finished. */
  idle(): Promise<void> {
    return this.#tail;
  }
}
