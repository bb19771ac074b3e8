/** The pulls waiting for a gate to open: each is released once, or rejected when its signal aborts. */
export class GateWaiters {
  #waiters = new Set<() => void>();

  wait(signal: AbortSignal): Promise<void> {
    if (signal.aborted) return Promise.reject(signal.reason as Error);
    return new Promise<void>((resolve, reject) => {
      const onAbort = () => {
        this.#waiters.delete(release);
        reject(signal.reason as Error);
      };
      const release = () => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      };
      this.#waiters.add(release);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  releaseAll(): void {
    for (const release of this.#waiters) release();
    this.#waiters.clear();
  }
}
