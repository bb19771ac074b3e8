import type { Logger } from 'pino';
import type { ApiClient } from '../api/wire/client.js';
import type { Budget } from '../api/budget/budget.js';
import { createServerApi } from '../api/server-api.js';
import { startDeadline, type Clock } from '../clock.js';
import type { Config } from '../config/schema.js';
import type { SettledDelivery } from '../delivery/history/history-record.js';
import type { Journal, JournalEntry } from '../delivery/journal/journal.js';
import { Reporter } from '../delivery/reporter.js';
import { storeLabel, type StoreKey } from './stores.js';

/**
 * What the journal owes for servers that no longer run (docs/design.md#lifecycle, "removed, settling"):
 * a reload removed a server whose command in hand could not be reported within the drain (its API
 * failing at that moment, a slow game server), or a server was taken out of the configuration while
 * porter was stopped. Its outcome is in the journal, so it is reported (done, or failed with its
 * reason; unknown when it never got one) through the store it was claimed for, for as long as that
 * store is configured, with the server's own call budget. Only a claim whose store is gone entirely
 * stays, and `porter check` and /healthz say so.
 */

interface LeftoverDeps {
  readonly journal: Journal;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly scrub: (text: string) => string;
  readonly history?: { record(delivery: SettledDelivery): void };
  /** The client of a configured store. */
  readonly clientFor: (config: Config, store: StoreKey) => ApiClient;
  /** A server's call budget, the same one its loop spent. */
  readonly budgetFor: (config: Config, serverId: string, store: StoreKey) => Budget;
  /** A settling ended: what it spent may no longer be needed. */
  readonly onSettled?: () => void;
}

/** A claim the journal holds that no configured store can report. */
export interface Unreportable {
  readonly serverId: string;
  readonly id: string;
  /** The store it was claimed for; undefined when the journal predates stores being recorded and several are configured. */
  readonly store: string | undefined;
}

interface Task {
  /** The server's lowercased id. */
  readonly server: string;
  readonly stop: AbortController;
  readonly done: Promise<void>;
  readonly client: ApiClient;
}

export class Leftovers {
  readonly #deps: LeftoverDeps;
  /** One task per server and store being settled, keyed `serverId|store`. */
  readonly #tasks = new Map<string, Task>();
  #cancelDrainBound = () => {};
  #stopping = false;

  constructor(deps: LeftoverDeps) {
    this.#deps = deps;
  }

  /**
   * Starts reporting what is owed for servers not in `running` (lowercased ids), through their
   * configured stores; stops the settling of a store no longer configured. Nothing new once stopping.
   */
  sweep(config: Config, running: ReadonlySet<string>): void {
    const owed = owedElsewhere(this.#deps.journal.pending(), config, running);
    for (const [key, task] of this.#tasks) if (!owed.get(key)?.store) task.stop.abort();
    if (this.#stopping) return;
    for (const [key, { serverId, store, entries }] of owed) {
      if (this.#tasks.has(key) || store === undefined) continue;
      this.#start(key, config, serverId, store.key, entries);
    }
  }

  /** The servers (lowercased ids) whose claims are being settled now. */
  settlingServers(): string[] {
    return [...this.#tasks.values()].map((task) => task.server);
  }

  /** The clients the settling uses now: they stay open while it does. */
  clients(): ApiClient[] {
    return [...this.#tasks.values()].map((task) => task.client);
  }

  /** A server runs again: its own loop reports what it owes from now on. Resolves once its settling stopped. */
  async release(serverId: string): Promise<void> {
    const mine = [...this.#tasks].filter(([key]) => key.startsWith(`${serverId.toLowerCase()}|`));
    for (const [, task] of mine) task.stop.abort();
    await Promise.all(mine.map(([, task]) => task.done));
  }

  /** porter stops: nothing new is settled, and what is not reported within `drainMs` stays journaled for the next start. */
  requestStop(drainMs: number): void {
    if (this.#stopping) return;
    this.#stopping = true;
    this.#cancelDrainBound = startDeadline(this.#deps.clock, drainMs, () => this.abandon());
  }

  /** Gives up at once (a second stop signal); what is unreported stays journaled. */
  abandon(): void {
    for (const task of this.#tasks.values()) task.stop.abort();
  }

  /** Resolves once every settling ended (see requestStop). */
  async stop(drainMs: number): Promise<void> {
    this.requestStop(drainMs);
    await Promise.all([...this.#tasks.values()].map((task) => task.done));
    this.#cancelDrainBound();
  }

  #start(key: string, config: Config, serverId: string, store: StoreKey, entries: readonly JournalEntry[]): void {
    const { journal, clock, scrub, history } = this.#deps;
    const label = storeLabel(store);
    const logger = this.#deps.logger.child({ server: serverId, store: label });
    const client = this.#deps.clientFor(config, store);
    const api = createServerApi({ client, serverId, budget: this.#deps.budgetFor(config, serverId, store), clock, logger });
    const reporter = new Reporter({ serverId, api, journal, clock, logger, scrub, ...(history && { history }) });
    const stop = new AbortController();
    logger.info(
      { event: 'leftovers.reporting', commands: entries.map((entry) => entry.id) },
      `reporting what this server owes, now that it is no longer configured, through store "${label}"`,
    );
    const done = reporter
      .settleLeftovers(stop.signal, entries)
      .catch((error: unknown) => {
        // A refused token stops the store's own servers too; the next reload tries again.
        logger.error({ event: 'leftovers.failed', err: error }, 'could not report what this server owes; trying again on the next reload');
      })
      .finally(() => {
        this.#tasks.delete(key);
        this.#deps.onSettled?.();
      });
    this.#tasks.set(key, { server: serverId.toLowerCase(), stop, done, client });
  }
}

interface OwedGroup {
  readonly serverId: string;
  /** Undefined: no configured store can report these. */
  readonly store: { readonly key: StoreKey } | undefined;
  readonly entries: JournalEntry[];
}

/**
 * The journal's claims that no configured store can report (their server is not configured, and
 * the store they were claimed for is gone): for `porter check` and /healthz.
 */
export function unreportable(entries: readonly JournalEntry[], config: Config, running: ReadonlySet<string>): Unreportable[] {
  return [...owedElsewhere(entries, config, running).values()]
    .filter((group) => group.store === undefined)
    .flatMap((group) => group.entries.map((entry) => ({ serverId: entry.serverId, id: entry.id, store: entry.store })));
}

/** The journal's claims of servers not running, grouped by server and the store that can report them. */
function owedElsewhere(entries: readonly JournalEntry[], config: Config, running: ReadonlySet<string>): Map<string, OwedGroup> {
  const groups = new Map<string, OwedGroup>();
  for (const entry of entries) {
    if (running.has(entry.serverId.toLowerCase())) continue;
    const store = reportingStore(entry, config);
    const key = `${entry.serverId.toLowerCase()}|${store === undefined ? '?' : storeLabel(store.key)}`;
    let group = groups.get(key);
    if (!group) groups.set(key, (group = { serverId: entry.serverId, store, entries: [] }));
    group.entries.push(entry);
  }
  return groups;
}

/** The configured store a claim was made for; a journal that predates stores being recorded can only mean `api` when it is the only store. */
function reportingStore(entry: JournalEntry, config: Config): { readonly key: StoreKey } | undefined {
  const named = Object.keys(config.stores ?? {});
  if (entry.store === undefined) return named.length === 0 ? { key: undefined } : undefined;
  if (entry.store === storeLabel(undefined)) return { key: undefined };
  return named.includes(entry.store) ? { key: entry.store } : undefined;
}
