/**
 * A condition a pull must meet as it is sent (docs/design.md#lifecycle): the Agones GameServer's
 * state, the state directory's lease. `heldBecause` says, for the pull.withheld line, why it is shut.
 */
export interface PullGate {
  isOpen(): boolean;
  /** Resolves at once while open, else when it opens; rejects when `signal` aborts. */
  waitOpen(signal: AbortSignal): Promise<void>;
  heldBecause?(): string;
}

/** Open only while every gate is: waits for each in turn, then checks all again (one may have shut meanwhile). */
export function allGates(gates: ReadonlyArray<PullGate | undefined>): PullGate {
  const present = gates.filter((gate): gate is PullGate => gate !== undefined);
  const shut = () => present.find((gate) => !gate.isOpen());
  return {
    isOpen: () => shut() === undefined,
    waitOpen: async (signal) => {
      for (let gate = shut(); gate !== undefined; gate = shut()) await gate.waitOpen(signal);
    },
    heldBecause: () => shut()?.heldBecause?.() ?? 'a claim gate is shut',
  };
}

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
