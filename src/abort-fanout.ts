/**
 * Many short waits on one long-lived signal, each told when it aborts, for one listener on the
 * signal. An idle fleet's every API call waits on its loop's stop signal; EventTarget's add and
 * remove per call were a twentieth of porter's main thread (docs/benchmarks.md, fleet), a Set's
 * add and delete are next to nothing. Keyed weakly: a signal that is collected takes its set along.
 */
export class AbortFanout {
  readonly #waiting = new WeakMap<AbortSignal, Set<() => void>>();

  /** Calls `onAbort` when `signal` aborts (never when it already had), until `off` is called with the same pair. */
  on(signal: AbortSignal, onAbort: () => void): void {
    let waiting = this.#waiting.get(signal);
    if (waiting === undefined) {
      const created = new Set<() => void>();
      waiting = created;
      this.#waiting.set(signal, created);
      signal.addEventListener(
        'abort',
        () => {
          // Over a copy, asking again before each call: a callback may end another wait (off), and
          // that one is not told, as EventTarget skips a listener removed during its dispatch.
          for (const told of [...created]) if (created.delete(told)) told();
        },
        { once: true },
      );
    }
    waiting.add(onAbort);
  }

  off(signal: AbortSignal, onAbort: () => void): void {
    this.#waiting.get(signal)?.delete(onAbort);
  }
}
