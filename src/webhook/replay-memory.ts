import { createHash } from 'node:crypto';

/**
 * The ids of events already acted on, so that a retry or a replay wakes nothing more
 * (docs/design.md#webhook-wake-ups). An id is kept for `windowMs`, and at most `capacity` ids are
 * kept: past that the oldest is forgotten. Ids are stored as fixed-size digests, so neither long
 * ids nor a flood of distinct ones can grow the memory past `capacity` entries of a few dozen
 * bytes.
 *
 * Forgetting is safe because a wake-up is only a hint: an event whose id was evicted (or whose
 * window passed) wakes its servers once more, which costs one pull inside their budget, never a
 * delivery twice (the journal and the settled-id memory keep that promise, not this).
 */
const REPLAY_CAPACITY = 10_000;

export class ReplayMemory {
  /** digest → when it is forgotten; insertion order is expiry order, since every entry lives `windowMs`. */
  readonly #seen = new Map<string, number>();
  readonly #windowMs: number;
  readonly #capacity: number;

  constructor(windowMs: number, capacity = REPLAY_CAPACITY) {
    this.#windowMs = windowMs;
    this.#capacity = capacity;
  }

  get size(): number {
    return this.#seen.size;
  }

  /**
   * True when any of `ids` was remembered at `now`; remembers them all either way. `scope`
   * separates stores and kinds of id (a `webhook-id` never matches an `eventId`).
   */
  seenBefore(scope: string, ids: readonly string[], now: number): boolean {
    this.#forgetExpired(now);
    let seen = false;
    for (const id of ids) {
      const key = createHash('sha256').update(scope).update('\0').update(id).digest('base64');
      if (this.#seen.delete(key)) seen = true;
      this.#seen.set(key, now + this.#windowMs);
    }
    while (this.#seen.size > this.#capacity) this.#seen.delete(this.#seen.keys().next().value!);
    return seen;
  }

  #forgetExpired(now: number): void {
    for (const [key, until] of this.#seen) {
      if (until > now) return;
      this.#seen.delete(key);
    }
  }
}
