/**
 * The connections to one Seller API origin, shared fairly by the stores there
 * (docs/design.md#many-stores). porter never hands the pool more requests than it has
 * connections, so a request waits here, in porter's sight, instead of in undici's queue: its
 * deadline starts only when it is sent, and one never sent is known not to have been processed.
 *
 * Fair: a store takes a free connection only if enough stay free for every other store that has
 * none in use right now, one each; a store whose API answers slowly therefore fills at most what
 * the others leave, and never the last connection another store needs. Connections freed go to
 * the waiting stores in turn, the store holding the fewest first.
 */

interface Waiter {
  readonly store: string;
  readonly grant: () => void;
}

export class ConnectionShare {
  readonly #cap: number;
  readonly #inUse = new Map<string, number>();
  /** Stores that use this origin (their clients are open): each may need a connection at any time. */
  readonly #members = new Map<string, number>();
  readonly #waiting: Waiter[] = [];
  #total = 0;

  constructor(cap: number) {
    this.#cap = Math.max(1, cap);
  }

  get cap(): number {
    return this.#cap;
  }

  /** Connections in use now, all stores together. */
  get inUse(): number {
    return this.#total;
  }

  /** A store's client opened at this origin (a store may have more than one while a reload retires one). */
  join(store: string): void {
    this.#members.set(store, (this.#members.get(store) ?? 0) + 1);
  }

  leave(store: string): void {
    const left = (this.#members.get(store) ?? 1) - 1;
    if (left > 0) this.#members.set(store, left);
    else {
      this.#members.delete(store);
      // A store removed by a reload takes its count along once it holds none.
      if (this.#inUse.get(store) === 0) this.#inUse.delete(store);
    }
    this.#grant();
  }

  /** A connection for `store` now, when its share allows; false when it must wait. */
  tryTake(store: string): boolean {
    if ((this.#waiting.length > 0 && this.#waiting.some((w) => w.store === store)) || !this.#mayTake(store)) return false;
    this.#take(store);
    return true;
  }

  /** Waits for a connection for `store`; rejects with the signal's reason when it aborts first (nothing was sent). */
  take(store: string, signal?: AbortSignal): Promise<void> {
    if (this.tryTake(store)) return Promise.resolve();
    if (signal?.aborted) return Promise.reject(signal.reason as Error);
    return new Promise<void>((resolve, reject) => {
      const onAbort = () => {
        const at = this.#waiting.indexOf(waiter);
        if (at >= 0) this.#waiting.splice(at, 1);
        reject(signal?.reason as Error);
      };
      const waiter: Waiter = {
        store,
        grant: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
      };
      this.#waiting.push(waiter);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** The exchange that held a connection of `store` ended. */
  release(store: string): void {
    const held = this.#inUse.get(store) ?? 0;
    if (held <= 0) return;
    // Kept at 0, not deleted: a delete and a set again per call rebuild the map's table now and then.
    if (held === 1 && !this.#members.has(store)) this.#inUse.delete(store);
    else this.#inUse.set(store, held - 1);
    this.#total--;
    this.#grant();
  }

  #take(store: string): void {
    this.#inUse.set(store, (this.#inUse.get(store) ?? 0) + 1);
    this.#total++;
  }

  /** Whether `store` may take one more now, leaving one for each other member that holds none. */
  #mayTake(store: string): boolean {
    const free = this.#cap - this.#total;
    if (free <= 0) return false;
    // A store that holds none may always take a free one: that is the one kept for it.
    if ((this.#inUse.get(store) ?? 0) === 0) return true;
    let kept = 0;
    for (const member of this.#members.keys()) if (member !== store && !this.#inUse.get(member)) kept++;
    return free - 1 >= Math.min(kept, this.#cap - 1);
  }

  /** Hands free connections to the waiting, the store holding the fewest first, in arrival order among equals. */
  #grant(): void {
    while (this.#waiting.length > 0) {
      let best = -1;
      for (let i = 0; i < this.#waiting.length; i++) {
        const store = this.#waiting[i]!.store;
        if (!this.#mayTake(store)) continue;
        if (best < 0 || (this.#inUse.get(store) ?? 0) < (this.#inUse.get(this.#waiting[best]!.store) ?? 0)) best = i;
      }
      if (best < 0) return;
      const [waiter] = this.#waiting.splice(best, 1);
      this.#take(waiter!.store);
      waiter!.grant();
    }
  }
}
