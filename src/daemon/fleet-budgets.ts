import { Budget, type BudgetSettings } from '../api/budget/budget.js';
import { startDeadline, type Clock } from '../clock.js';

/**
 * The fleet's call budgets, one per server id (docs/design.md#the-call-budget). A server's budget
 * outlives its loop: a loop a reload restarts, the settling of a removed server's claims, and the
 * server added back spend the same one, so removing and re-adding a server cannot make room in a
 * window the API still counts. It is dropped once nothing can spend it (`inUse` says no: the
 * server is not configured, runs no loop and settles nothing) and the last call it recorded has
 * left the rolling window; a host that churns servers all day keeps only those of the last window.
 */
export class FleetBudgets {
  readonly #clock: Clock;
  readonly #inUse: () => ReadonlySet<string>;
  readonly #budgets = new Map<string, Budget>();
  #wake: { readonly at: number; readonly cancel: () => void } | undefined;
  #closed = false;

  /** `inUse()`: the (lowercased) server ids whose budgets something may still spend. */
  constructor(clock: Clock, inUse: () => ReadonlySet<string>) {
    this.#clock = clock;
    this.#inUse = inUse;
  }

  /** The budget of a server id (any case), made with `settings` if none is held. */
  for(serverId: string, settings: () => BudgetSettings): Budget {
    const key = serverId.toLowerCase();
    let budget = this.#budgets.get(key);
    if (!budget) this.#budgets.set(key, (budget = new Budget(settings(), this.#clock)));
    return budget;
  }

  /** The server ids (lowercased) whose budgets are held. */
  keys(): string[] {
    return [...this.#budgets.keys()];
  }

  /**
   * Drops every budget nothing can spend and the API no longer counts; wakes on the clock when the
   * next of the others goes quiet, to look again. Call it whenever something stopped using one.
   */
  sweep(): void {
    const now = this.#clock.now();
    const inUse = this.#inUse();
    let next = Number.POSITIVE_INFINITY;
    for (const [key, budget] of this.#budgets) {
      if (inUse.has(key)) continue;
      const quietAt = budget.quietAt();
      if (quietAt <= now) this.#budgets.delete(key);
      else next = Math.min(next, quietAt);
    }
    if (this.#closed || next === Number.POSITIVE_INFINITY || (this.#wake !== undefined && this.#wake.at <= next)) return;
    this.#wake?.cancel();
    const cancel = startDeadline(this.#clock, next - now, () => {
      this.#wake = undefined;
      this.sweep();
    });
    this.#wake = { at: next, cancel };
  }

  /** No more sweeps (porter stops). */
  close(): void {
    this.#closed = true;
    this.#wake?.cancel();
    this.#wake = undefined;
  }
}
