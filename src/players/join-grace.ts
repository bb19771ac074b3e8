/**
 * The join grace (`players.joinGraceMs`, docs/configuration.md#keys): an identifier that a
 * player read lists for the first time is held out of the pull's online list until it has been
 * listed for `graceMs` without a break, so an online-only command is not claimed for a player who
 * is still loading in.
 *
 * Times are the injected clock's (monotonic in porter: a wall-clock step neither shortens nor
 * lengthens a grace). Only successful reads move it: a read that failed says nothing about who
 * left, except that the game server could not be reached at all (`lost`), after which everyone
 * listed is new, since the server may have restarted and everyone on it joined again.
 */
export class JoinGrace {
  readonly #graceMs: number;
  /** Each listed identifier's first sight in its current unbroken run; -Infinity for the settled. */
  #since = new Map<string, number>();
  /** Graced identifiers whose end has not been announced yet. */
  #waiting = new Set<string>();
  /**
   * Porter's first list is a baseline: a player already online when porter starts has almost
   * surely finished spawning, and holding everyone back at every restart would delay every
   * online-only purchase by the grace for nothing.
   */
  #baseline = true;

  constructor(graceMs: number) {
    if (!(Number.isInteger(graceMs) && graceMs >= 0)) throw new RangeError('graceMs must be a whole number of milliseconds, 0 or more');
    this.#graceMs = graceMs;
  }

  /**
   * A successful read at `now`. Returns the identifiers that may be sent from now on and were
   * not before (those new with no grace to wait, or whose grace has just ended): the ones worth a
   * pull.
   */
  listed(ids: readonly string[], now: number): string[] {
    const next = new Map<string, number>();
    const joined: string[] = [];
    for (const id of ids) {
      const since = this.#since.get(id);
      if (since !== undefined) next.set(id, since);
      else if (this.#baseline) next.set(id, -Infinity);
      else {
        next.set(id, now);
        if (this.#graceMs === 0) joined.push(id);
        else this.#waiting.add(id);
      }
    }
    this.#since = next;
    this.#baseline = false;
    // A graced identifier that left is forgotten: should it come back, its grace starts again.
    for (const id of this.#waiting) if (!next.has(id)) this.#waiting.delete(id);
    return [...joined, ...this.ended(now)];
  }

  /** The game server could not be reached: whoever the next read lists has joined since. */
  lost(): void {
    this.#since.clear();
    this.#waiting.clear();
    this.#baseline = false;
  }

  /** The identifiers whose grace ended by `now` and that were not returned before. */
  ended(now: number): string[] {
    const ended: string[] = [];
    for (const id of this.#waiting) {
      if (this.#sendable(id, now)) {
        this.#waiting.delete(id);
        ended.push(id);
      }
    }
    return ended;
  }

  /** Of `ids` (a list this grace was given), those that may be sent at `now`, in their order. */
  sendable(ids: readonly string[], now: number): string[] {
    return this.#graceMs === 0 ? [...ids] : ids.filter((id) => this.#sendable(id, now));
  }

  /** How long until the next grace ends; undefined while nobody waits. At least 1 ms. */
  msUntilNextEnd(now: number): number | undefined {
    let next: number | undefined;
    for (const id of this.#waiting) {
      const end = (this.#since.get(id) ?? now) + this.#graceMs;
      if (next === undefined || end < next) next = end;
    }
    return next === undefined ? undefined : Math.max(1, next - now);
  }

  #sendable(id: string, now: number): boolean {
    const since = this.#since.get(id);
    // Not listed by the last read: unknown here, and a list this grace was never given.
    return since === undefined || now - since >= this.#graceMs;
  }
}
