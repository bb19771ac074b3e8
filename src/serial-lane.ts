import { untilAborted } from './abort.js';

/**
 * Runs tasks one after another: one API call in flight per route (the budget's arithmetic needs
 * "the answer to my last call"), one RCON request in flight per connection. A waiter whose signal
 * aborts leaves the line at once; a task that has started always runs to its end before the next
 * begins. (p-queue's abort lets the next task start while the aborted one is still on the wire.)
 */
export class SerialLane {
  #tail: Promise<void> = Promise.resolve();

  async run<T>(task: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    const previous = this.#tail;
    let release!: () => void;
    const mine = new Promise<void>((resolve) => {
      release = resolve;
    });
    this.#tail = previous.then(() => mine);
    try {
      await untilAborted(previous, signal);
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
