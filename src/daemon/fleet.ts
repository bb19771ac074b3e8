import type { Budget } from '../api/budget/budget.js';
import type { ApiClient } from '../api/wire/client.js';
import type { InvalidTokenError, ScopeMissingError } from '../api/errors.js';
import type { Config, ResolvedServer } from '../config/schema.js';
import { webhookSecretOf } from '../config/webhook-secret.js';
import { serverLabel } from '../config/server-label.js';
import { buildServer, type ServerParts, type SharedParts } from './build-server.js';
import type { ReloadPlan } from './reload-plan.js';
import { ServerRunner } from './server-runner.js';
import { isTokenRefused, storeApi, StoreClients, storeLabel, tokenKeys, type StoreKey } from './stores.js';
import { Leftovers, unreportable, type Unreportable } from './leftovers.js';
import { FleetBudgets } from './fleet-budgets.js';
import type { RunnerState } from './runner-state.js';
import type { StoreStatus } from '../health/source.js';
import type { SecretBook } from '../secret-book.js';

/** What every server's loop shares (the journal, the history, the clock…), and what the fleet reports to. */
interface FleetDeps extends Pick<SharedParts, 'journal' | 'clock' | 'logger' | 'observer' | 'history' | 'gate'> {
  /** Every secret porter knows; history records and fail reasons are scrubbed with it, and the API clients add rotated tokens to it. */
  readonly secrets: SecretBook;
  /** A server's loop ended on a fatal error; `fromReload` when a reload started it. */
  readonly onFatal: (error: unknown, server: ResolvedServer, fromReload: boolean) => void;
  /**
   * The Seller API refused a store's token (docs/design.md#many-stores): its servers stop, the
   * others go on. `everyServer` is true when every configured server's store is refused now.
   */
  readonly onStoreRefused?: (error: unknown, store: StoreKey, everyServer: boolean) => void;
}

/** A store whose token the Seller API refused, until a reload starts its servers again. */
interface Refusal {
  readonly status: number;
  readonly code: string | undefined;
  readonly since: number;
}

/**
 * The servers porter runs right now, each with its loop, and what they share: one HTTP client
 * per API address and one call budget per server id, kept while anything can spend it or the API
 * can still count its calls (fleet-budgets.ts), so a loop that a reload restarts, or a server
 * removed and added back, keeps spending the budget the old one spent.
 */
export class Fleet {
  readonly #deps: FleetDeps;
  readonly #runners = new Map<string, ServerRunner>();
  readonly #budgets: FleetBudgets;
  readonly #clientOf = new Map<ServerRunner, ApiClient>();
  readonly #clients: StoreClients;
  readonly #refused = new Map<string, Refusal>();
  /** Runners a reload is logging in, not yet in the fleet: a stop must reach them too. */
  readonly #candidates = new Set<ServerRunner>();
  /** The drain bound, once porter is stopping: a runner built from then on is born stopping. */
  #stoppingWithin: number | undefined;
  #config: Config;

  readonly #leftovers: Leftovers;

  constructor(config: Config, deps: FleetDeps) {
    this.#config = config;
    this.#deps = deps;
    this.#clients = new StoreClients(deps.logger, deps.secrets);
    this.#budgets = new FleetBudgets(deps.clock, () => this.#spenders());
    this.#leftovers = new Leftovers({
      journal: deps.journal,
      clock: deps.clock,
      logger: deps.logger,
      scrub: deps.secrets.scrub,
      ...(deps.history && { history: deps.history }),
      clientFor: (config, store) => this.#clients.clientFor(config, store),
      budgetFor: (config, serverId, store) => this.#budgetFor(config, serverId, store),
      onSettled: () => this.#budgets.sweep(),
    });
  }

  /** A server's call budget: a loop that a reload restarts, the settling of a removed server, or the server added back within the window spends the same one. */
  #budgetFor(config: Config, serverId: string, store: StoreKey): Budget {
    return this.#budgets.for(serverId, () => storeApi(config, store).budget);
  }

  /** The server ids (lowercased) whose budgets something may still spend: configured, running or logging in, or settling claims. */
  #spenders(): Set<string> {
    return new Set([
      ...this.#config.servers.map(keyOf),
      ...this.#runners.keys(),
      ...[...this.#candidates].map((runner) => keyOf(runner.parts.server)),
      ...this.#leftovers.settlingServers(),
    ]);
  }

  /**
   * Reports what the journal owes for servers that do not run (removed by a reload, or while porter
   * was stopped), through the stores they were claimed for (docs/design.md#lifecycle).
   */
  settleLeftovers(): void {
    this.#leftovers.sweep(this.#config, new Set(this.#runners.keys()));
  }

  /** The journal's claims no configured store can report: they stay PROCESSING on the platform (/healthz, porter check). */
  unreportable(): Unreportable[] {
    return unreportable(this.#deps.journal.pending(), this.#config, new Set(this.#runners.keys()));
  }

  /** Each running server's parts, and where its runner is in its lifecycle (for /healthz and /metrics). */
  get parts(): Array<ServerParts & { readonly state: RunnerState }> {
    return [...this.#runners.values()].map((runner) => ({ ...runner.parts, state: runner.state }));
  }

  get size(): number {
    return this.#runners.size;
  }

  /** Builds every configured server's runner (none runs yet), loading the executors their transports need. */
  async assemble(): Promise<ServerRunner[]> {
    const runners = await Promise.all(this.#config.servers.map((server) => this.#build(server)));
    for (const runner of runners) this.#runners.set(keyOf(runner.parts.server), runner);
    return runners;
  }

  async #build(server: ResolvedServer): Promise<ServerRunner> {
    const { journal, history, clock, logger, secrets, observer, gate } = this.#deps;
    const key = keyOf(server);
    const client = this.#clients.clientFor(this.#config, server.store);
    const budget = this.#budgetFor(this.#config, key, server.store);
    const parts = await buildServer(server, {
      client,
      budget,
      pollIdleMs: this.#config.poll.idleMs,
      // Only a store whose events can be verified is woken by them; the others keep the faster idle pace.
      webhookWakes: this.#config.webhook !== undefined && webhookSecretOf(this.#config, server.store) !== undefined,
      journal,
      clock,
      logger,
      scrub: secrets.scrub,
      ...(observer ? { observer } : {}),
      ...(history ? { history } : {}),
      ...(gate ? { gate } : {}),
    });
    const runner = new ServerRunner(parts, { logger, clock });
    this.#clientOf.set(runner, client);
    // After the build's wait: a stop that came while the executor loaded finds this runner here.
    if (this.#stoppingWithin !== undefined) runner.requestStop(this.#stoppingWithin);
    return runner;
  }

  /** Runs a runner's loop until it stops; it leaves the fleet when its loop ends. */
  start(runner: ServerRunner, fromReload: boolean): void {
    const key = keyOf(runner.parts.server);
    this.#runners.set(key, runner);
    runner
      .run()
      .catch((error: unknown) => {
        if (isTokenRefused(error)) this.#storeRefused(error, runner.parts.server.store);
        else this.#deps.onFatal(error, runner.parts.server, fromReload);
      })
      .finally(() => {
        if (this.#runners.get(key) === runner) this.#runners.delete(key);
        this.#clientOf.delete(runner);
        void runner.close();
        this.#budgets.sweep();
      });
  }

  /**
   * Marks the store refused and stops its servers, once per refusal: the other stores go on. A
   * reload starts its servers again (with a new token, or after the scope was granted).
   */
  #storeRefused(error: InvalidTokenError | ScopeMissingError, store: StoreKey): void {
    const label = storeLabel(store);
    if (this.#refused.has(label)) return;
    this.#refused.set(label, { status: error.status, code: error.apiCode, since: this.#deps.clock.now() });
    const servers = this.#config.servers.filter((server) => server.store === store).map((server) => serverLabel(server));
    const everyServer = this.#config.servers.every((server) => this.#refused.has(storeLabel(server.store)));
    // The error's own advice names api.token; a named store's token is set elsewhere, so its fields go without it.
    const { detail, traceId, requiredScope } = error;
    this.#deps.logger.error(
      {
        event: 'store.refused',
        ...(store === undefined ? { err: error } : { detail, traceId, requiredScope }),
        store: label,
        status: error.status,
        apiCode: error.apiCode,
        servers,
      },
      `store "${label}": the Seller API refused its token (${error.status} ${error.apiCode ?? '(no code)'}); its servers stop (${servers.join(', ')}), ${everyServer ? 'and no other store is left to deliver for' : 'the other stores go on'}. Give it a token with scope commands:execute in ${tokenKeys(store)} and reload`,
    );
    for (const runner of this.#runners.values()) if (runner.parts.server.store === store) runner.requestStop(this.#config.shutdown.drainMs);
    this.#deps.onStoreRefused?.(error, store, everyServer);
  }

  /** Every store that has servers or is configured, with its servers and whether its token was refused; for /healthz and metrics. */
  stores(): StoreStatus[] {
    const names: StoreKey[] = [undefined, ...Object.keys(this.#config.stores ?? {})];
    return names
      .map((store) => {
        const label = storeLabel(store);
        const refused = this.#refused.get(label);
        return {
          name: label,
          servers: this.#config.servers.filter((server) => server.store === store).map((server) => serverLabel(server)),
          ...(refused && { refused }),
        };
      })
      .filter((status) => status.name !== storeLabel(undefined) || status.servers.length > 0 || names.length === 1);
  }

  /**
   * Wakes the loops of a store's servers (undefined: the default store's) to pull now, within
   * their budgets: a webhook said a payment was approved. Returns how many were woken.
   */
  wakeStore(store: StoreKey): number {
    let woken = 0;
    for (const runner of this.#runners.values()) {
      if (runner.parts.server.store !== store || runner.stopping) continue;
      runner.parts.loop.wake();
      woken++;
    }
    return woken;
  }

  /** No new pulls anywhere, from now on: every runner drains within `drainMs`, and the logins of a reload are abandoned. */
  requestStop(drainMs: number): void {
    this.#stoppingWithin ??= drainMs;
    for (const runner of [...this.#runners.values(), ...this.#candidates]) runner.requestStop(drainMs);
    this.#leftovers.requestStop(drainMs);
  }

  abandon(): void {
    for (const runner of [...this.#runners.values(), ...this.#candidates]) runner.abandon();
    this.#leftovers.abandon();
  }

  async stop(drainMs: number): Promise<void> {
    await Promise.all([...[...this.#runners.values()].map((runner) => runner.stop(drainMs)), this.#leftovers.stop(drainMs)]);
    this.#budgets.close();
    await this.#clients.closeAll();
  }

  /**
   * Applies a reload (docs/design.md#configuration). New and changed servers log in first: one
   * whose login is refused is not started, and a changed one keeps running with its old settings.
   * Then removed and changed servers finish the command in hand and stop, and the new loops start.
   * Returns the configuration now running.
   */
  async apply(plan: ReloadPlan, next: Config, stopping: AbortSignal): Promise<{ config: Config; refused: string[] }> {
    const { logger } = this.#deps;
    const running = this.#config;
    this.#config = next;
    for (const store of plan.newTokenStores) this.#clients.useToken(store, storeApi(next, store).token);
    for (const store of plan.newClientStores) this.#clients.retire(store);

    // A removed server pulls nothing from here on; it drains while the new logins go on.
    const removed = plan.removed
      .map((id) => this.#runners.get(id.toLowerCase()))
      .filter((runner): runner is ServerRunner => runner !== undefined);
    for (const runner of removed) runner.requestStop(next.shutdown.drainMs);
    // Servers whose last start failed are not running: a reload tries them again.
    const wanted = [...plan.added, ...plan.changed, ...next.servers.filter((s) => !this.#runners.has(keyOf(s)) && !plan.added.includes(s))];
    const candidates = await Promise.all([...new Set(wanted)].map((server) => this.#build(server)));
    for (const runner of candidates) this.#candidates.add(runner);
    const refused: string[] = [];
    const accepted = (
      await Promise.all(
        candidates.map(async (runner) => {
          try {
            await runner.connect();
            return runner;
          } catch (error) {
            refused.push(keyOf(runner.parts.server));
            this.#candidates.delete(runner);
            await runner.close();
            this.#clientOf.delete(runner);
            if (stopping.aborted) return undefined;
            logger.error(
              { event: 'reload.login.refused', err: error, server: serverLabel(runner.parts.server) },
              this.#runners.has(keyOf(runner.parts.server))
                ? 'reload: the game server refused the new settings; this server keeps running with its previous ones'
                : 'reload: the game server refused the login; this server was not started (fix its settings and reload)',
            );
            return undefined;
          }
        }),
      )
    ).filter((runner): runner is ServerRunner => runner !== undefined);

    const replaced = accepted.map((runner) => this.#runners.get(keyOf(runner.parts.server))).filter((runner) => runner !== undefined);
    const leaving = [...removed, ...replaced];
    await Promise.all(leaving.map((runner) => runner.stop(next.shutdown.drainMs)));
    for (const runner of leaving) this.#clientOf.delete(runner);
    for (const runner of accepted) this.#candidates.delete(runner);
    if (stopping.aborted) {
      await Promise.all(accepted.map((runner) => runner.close()));
    } else {
      // A server added back reports its own leftovers: the settling of it ends first, so no report goes twice at once.
      await Promise.all(accepted.map((runner) => this.#leftovers.release(runner.parts.server.id)));
      // A store whose servers start again is no longer refused: cleared first, so a refusal of the new start is logged and acted on.
      for (const runner of accepted) this.#refused.delete(storeLabel(runner.parts.server.store));
      for (const runner of accepted) this.start(runner, true);
    }
    for (const label of [...this.#refused.keys()]) {
      if (!next.servers.some((server) => storeLabel(server.store) === label)) this.#refused.delete(label);
    }
    this.settleLeftovers();
    this.#budgets.sweep();
    await this.#clients.closeUnused(new Set([...this.#clientOf.values(), ...this.#leftovers.clients()]));

    // What runs: a refused change keeps the old entry, a refused addition is not there.
    const servers = next.servers.flatMap((server) => {
      if (!refused.includes(keyOf(server))) return [server];
      const old = running.servers.find((s) => keyOf(s) === keyOf(server));
      return old && this.#runners.has(keyOf(server)) ? [old] : [];
    });
    this.#config = { ...next, servers };
    return { config: this.#config, refused };
  }
}

function keyOf(server: { readonly id: string }): string {
  return server.id.toLowerCase();
}
