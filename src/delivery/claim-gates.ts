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
