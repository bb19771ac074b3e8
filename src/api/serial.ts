/**
 * Runs calls one after another. The budget's arithmetic ("the answer to my last call") needs at
 * most one call in flight per route; a waiter that is aborted leaves without holding up the rest.
 * Not p-queue: its abort lets the next task start while the aborted one's request is still open.
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
      await waitOrAbort(previous, signal);
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
}

function waitOrAbort(promise: Promise<void>, signal: AbortSignal | undefined): Promise<void> {
  if (!signal) return promise;
  signal.throwIfAborted();
  return new Promise<void>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      () => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      },
      () => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      },
    );
  });
}
