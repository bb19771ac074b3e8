/**
 * Many short waits on one long-lived signal, each told when it aborts, for one listener on the
 * signal. An idle fleet's every API call waits on its loop's stop signal; EventTarget's add and
 * remove per call were a twentieth of porter's main thread (docs/benchmarks.md, fleet). A wait is
 * a handle in a short array per signal: ending it touches no hash table (a Set's add and delete
 * per call rebuilt its table every few calls, garbage for the collector). Keyed weakly: a signal
 * that is collected takes its waits along.
 */
export interface FanoutWait {
  /** Ends the wait: its callback is not called after this, not even by an abort under way. */
  end(): void;
}

class Wait implements FanoutWait {
  active = true;
  constructor(
    readonly told: () => void,
    readonly line: Wait[],
  ) {}

  end(): void {
    if (!this.active) return;
    this.active = false;
    const { line } = this;
    const at = line.indexOf(this);
    // Shifted by hand: splice would allocate the array of what it removed, on every call.
    for (let i = at; i >= 0 && i < line.length - 1; i++) line[i] = line[i + 1]!;
    if (at >= 0) line.length--;
  }
}

export class AbortFanout {
  readonly #lines = new WeakMap<AbortSignal, Wait[]>();

  /** Calls `onAbort` when `signal` aborts (never when it already had), until the wait is ended. */
  on(signal: AbortSignal, onAbort: () => void): FanoutWait {
    let line = this.#lines.get(signal);
    if (line === undefined) {
      const created: Wait[] = [];
      line = created;
      this.#lines.set(signal, created);
      signal.addEventListener(
        'abort',
        () => {
          // Over a copy, asking again before each call: a callback may end another wait, and that
          // one is not told, as EventTarget skips a listener removed during its dispatch.
          for (const wait of [...created]) {
            if (!wait.active) continue;
            wait.end();
            wait.told();
          }
        },
        { once: true },
      );
    }
    const wait = new Wait(onAbort, line);
    line.push(wait);
    return wait;
  }
}
