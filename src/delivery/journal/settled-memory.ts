import type { Outcome } from '../outcome.js';

/**
 * The ids porter has settled lately, per server, with the outcome it reported. The API may hand
 * out an id again (a platform retry, a replica that missed the report): a remembered id is never
 * run again; its remembered outcome is reported again instead.
 *
 * Bounded both ways so that it cannot grow without end on a busy server nor keep a quiet
 * server's ids forever: at most `maxPerServer` ids per server (the oldest go first) and none older
 * than `maxAgeMs`. The platform's own retries come within minutes; the bounds keep days of an
 * ordinary store's deliveries. A new command always gets a new id (a dashboard retry included),
 * so remembering an old id can never hold back a new purchase.
 */

export interface SettledLimits {
  readonly maxPerServer: number;
  readonly maxAgeMs: number;
}

const SETTLED_LIMITS: SettledLimits = { maxPerServer: 5_000, maxAgeMs: 7 * 24 * 60 * 60 * 1000 };

export interface SettledId {
  readonly serverId: string;
  readonly id: string;
  readonly outcome: Outcome;
  readonly settledAt: number;
}

export class SettledMemory {
  readonly #limits: SettledLimits;
  /** Per server, in the order settled (Map keeps insertion order), oldest first. */
  readonly #servers = new Map<string, Map<string, SettledId>>();

  constructor(limits: SettledLimits = SETTLED_LIMITS) {
    this.#limits = limits;
  }

  remember(entry: SettledId): void {
    let ids = this.#servers.get(entry.serverId);
    if (!ids) {
      ids = new Map();
      this.#servers.set(entry.serverId, ids);
    }
    ids.delete(entry.id);
    ids.set(entry.id, entry);
    while (ids.size > this.#limits.maxPerServer) ids.delete(ids.keys().next().value!);
  }

  /** The remembered settlement of `id`, unless it is older than the age bound at `now`. */
  recall(serverId: string, id: string, now: number): SettledId | undefined {
    const entry = this.#servers.get(serverId)?.get(id);
    return entry !== undefined && now - entry.settledAt <= this.#limits.maxAgeMs ? entry : undefined;
  }

  /** Drops what has aged out; every remaining entry, oldest first per server, for the snapshot. */
  prune(now: number): SettledId[] {
    const kept: SettledId[] = [];
    for (const [serverId, ids] of this.#servers) {
      for (const [id, entry] of ids) {
        if (now - entry.settledAt > this.#limits.maxAgeMs) ids.delete(id);
        else kept.push(entry);
      }
      if (ids.size === 0) this.#servers.delete(serverId);
    }
    return kept;
  }
}
