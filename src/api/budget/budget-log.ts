/**
 * Porter's own calls to one route over the last `windowMs`, for the rolling-window rule of
 * budget.ts. A call is held at its send time while it is in flight and moved to the time its
 * answer (or failure) came once it ends: the platform counts a request somewhere between the two,
 * so counting a call until `windowMs` after its answer is never early.
 *
 * Answered calls are kept as runs of (time, count) in time order. Up to EXACT_UP_TO calls a window
 * every time is kept as it is; above that (a budget lifted for a benchmark), times are rounded up
 * to 1/EXACT_UP_TO of the window so memory stays bounded whatever the cap. Rounding up only makes a
 * call count longer, never shorter.
 */
export const EXACT_UP_TO = 1024;
/** More calls than this in flight means their answers were never reported: the oldest is settled. */
const MAX_IN_FLIGHT = 64;
const NONE_IN_FLIGHT: readonly number[] = [];

export class CallLog {
  readonly #windowMs: number;
  readonly #granularityMs: number;
  #times: number[] = [];
  #counts: number[] = [];
  #head = 0;
  #answered = 0;
  readonly #inFlight: number[] = [];

  constructor(windowMs: number, maxPerWindow: number) {
    this.#windowMs = windowMs;
    this.#granularityMs = maxPerWindow <= EXACT_UP_TO ? 0 : windowMs / EXACT_UP_TO;
  }

  /** Records a call sent at `now`. */
  send(now: number): void {
    this.#inFlight.push(now);
    if (this.#inFlight.length <= MAX_IN_FLIGHT) return;
    // Calls whose end is never reported: one that still counts goes on counting from now.
    const sentAt = this.#inFlight.shift()!;
    if (sentAt > now - this.#windowMs) this.#record(now);
  }

  /** The call recorded last was never sent after all (withheld at the send): it does not count. */
  withdraw(): void {
    this.#inFlight.pop();
  }

  /** The oldest call in flight ended at `now`; returns its send time (undefined if none was in flight). */
  end(now: number): number | undefined {
    const sentAt = this.#inFlight.shift();
    if (sentAt !== undefined) this.#record(now);
    return sentAt;
  }

  #record(now: number): void {
    const at = this.#granularityMs === 0 ? now : Math.ceil(now / this.#granularityMs) * this.#granularityMs;
    const last = this.#times.length - 1;
    if (last >= this.#head && this.#times[last] === at) this.#counts[last]!++;
    else {
      this.#times.push(at);
      this.#counts.push(1);
    }
    this.#answered++;
  }

  /** Calls that count at `now`: answered within the last windowMs, or sent within it and still in flight. */
  count(now: number): number {
    this.#prune(now);
    const since = now - this.#windowMs;
    // A loop, not filter(): the budget asks this several times per call, and every idle pull of a fleet counts.
    let flying = 0;
    for (const sentAt of this.#inFlight) if (sentAt > since) flying++;
    return this.#answered + flying;
  }

  /** When the oldest counted call stops counting; undefined when none counts. */
  oldestEndsAt(now: number): number | undefined {
    return this.#nthOldest(now, 0);
  }

  /** When the newest call recorded stops counting (in flight: a window after its send, as `count` has it); undefined when none ever was. */
  newestEndsAt(): number | undefined {
    const answered = this.#times.length > this.#head ? this.#times[this.#times.length - 1]! + this.#windowMs : undefined;
    const sent = this.#inFlight.length > 0 ? Math.max(...this.#inFlight) + this.#windowMs : undefined;
    if (answered === undefined) return sent;
    return sent === undefined ? answered : Math.max(answered, sent);
  }

  /** The earliest time at which fewer than `cap` calls count, if no call is added (now when already so). */
  freeAt(now: number, cap: number): number {
    const over = this.count(now) - cap;
    return over < 0 ? now : this.#nthOldest(now, over)!;
  }

  /** The time the `n`-th (0-based) oldest counted call stops counting. */
  #nthOldest(now: number, n: number): number | undefined {
    this.#prune(now);
    const since = now - this.#windowMs;
    const flying = this.#inFlight.length === 0 ? NONE_IN_FLIGHT : this.#inFlight.filter((sentAt) => sentAt > since).sort((a, b) => a - b);
    let left = n;
    let fly = 0;
    for (let run = this.#head; run < this.#times.length; run++) {
      const at = this.#times[run]!;
      for (; fly < flying.length && flying[fly]! < at; fly++, left--) {
        if (left === 0) return flying[fly]! + this.#windowMs;
      }
      const count = this.#counts[run]!;
      if (left < count) return at + this.#windowMs;
      left -= count;
    }
    for (; fly < flying.length; fly++, left--) {
      if (left === 0) return flying[fly]! + this.#windowMs;
    }
    return undefined;
  }

  #prune(now: number): void {
    const since = now - this.#windowMs;
    while (this.#head < this.#times.length && this.#times[this.#head]! <= since) {
      this.#answered -= this.#counts[this.#head]!;
      this.#head++;
    }
    if (this.#head > 64 && this.#head * 2 > this.#times.length) {
      this.#times = this.#times.slice(this.#head);
      this.#counts = this.#counts.slice(this.#head);
      this.#head = 0;
    }
  }
}
