import type { Logger } from 'pino';
import { Budget } from '../api/budget.js';
import { createApiClient, type ApiClient } from '../api/client.js';
import type { Clock } from '../clock.js';
import type { Config, ResolvedServer } from '../config/schema.js';
import { serverLabel } from '../config/server-label.js';
import type { DeliveryObserver } from '../delivery/loop.js';
import type { Journal } from '../delivery/journal.js';
import type { DeliveryLedger } from '../delivery/ledger.js';
import { buildServer, type ServerParts } from './build-server.js';
import type { ReloadPlan } from './reload-plan.js';
import { ServerRunner } from './server-runner.js';

export interface FleetDeps {
  readonly journal: Journal;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly scrub: (text: string) => string;
  readonly observer?: DeliveryObserver;
  /** The delivery history every loop records its settled commands in; it outlives the loops. */
  readonly history?: DeliveryLedger;
  /** A server's loop ended on a fatal error; `fromReload` when a reload started it. */
  readonly onFatal: (error: unknown, server: ResolvedServer, fromReload: boolean) => void;
}

/**
 * The servers porter runs right now, each with its loop, and what they share: one HTTP client
 * per API address and one call budget per server id for the daemon's whole life, so a loop that a
 * reload restarts keeps spending the budget the old one spent.
 */
export class Fleet {
  readonly #deps: FleetDeps;
  readonly #runners = new Map<string, ServerRunner>();
  readonly #budgets = new Map<string, Budget>();
  readonly #clientOf = new Map<ServerRunner, ApiClient>();
  #client: ApiClient;
  #everyClient: Set<ApiClient>;
  #config: Config;

  constructor(config: Config, deps: FleetDeps) {
    this.#config = config;
    this.#deps = deps;
    this.#client = createApiClient(config.api, { logger: deps.logger });
    this.#everyClient = new Set([this.#client]);
  }

  get parts(): ServerParts[] {
    return [...this.#runners.values()].map((runner) => runner.parts);
  }

  get size(): number {
    return this.#runners.size;
  }

  /** Builds every configured server's runner (none runs yet). */
  assemble(): ServerRunner[] {
    const runners = this.#config.servers.map((server) => this.#build(server, this.#client));
    for (const runner of runners) this.#runners.set(keyOf(runner.parts.server), runner);
    return runners;
  }

  #build(server: ResolvedServer, client: ApiClient): ServerRunner {
    const { journal, history, clock, logger, scrub, observer } = this.#deps;
    const key = keyOf(server);
    let budget = this.#budgets.get(key);
    if (!budget) this.#budgets.set(key, (budget = new Budget(this.#config.api.budget, clock)));
    const parts = buildServer(server, {
      client,
      budget,
      pollIdleMs: this.#config.poll.idleMs,
      webhookWakes: this.#config.webhook !== undefined,
      journal,
      clock,
      logger,
      scrub,
      ...(observer ? { observer } : {}),
      ...(history ? { history } : {}),
    });
    const runner = new ServerRunner(parts, { logger, clock });
    this.#clientOf.set(runner, client);
    return runner;
  }

  /** Runs a runner's loop until it stops; it leaves the fleet when its loop ends. */
  start(runner: ServerRunner, fromReload: boolean): void {
    const key = keyOf(runner.parts.server);
    this.#runners.set(key, runner);
    runner
      .run()
      .catch((error: unknown) => this.#deps.onFatal(error, runner.parts.server, fromReload))
      .finally(() => {
        if (this.#runners.get(key) === runner) this.#runners.delete(key);
        this.#clientOf.delete(runner);
        void runner.close();
      });
  }

  requestStop(drainMs: number): void {
    for (const runner of this.#runners.values()) runner.requestStop(drainMs);
  }

  abandon(): void {
    for (const runner of this.#runners.values()) runner.abandon();
  }

  async stop(drainMs: number): Promise<void> {
    await Promise.all([...this.#runners.values()].map((runner) => runner.stop(drainMs)));
    await Promise.all([...new Set([this.#client, ...this.#clientOf.values()])].map((client) => client.close().catch(() => undefined)));
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
    if (plan.tokenChanged) for (const client of new Set([this.#client, ...this.#clientOf.values()])) client.useToken(next.api.token);
    if (plan.newApiClient) this.#client = createApiClient(next.api, { logger });

    // Servers whose last start failed are not running: a reload tries them again.
    const wanted = [...plan.added, ...plan.changed, ...next.servers.filter((s) => !this.#runners.has(keyOf(s)) && !plan.added.includes(s))];
    const candidates = [...new Set(wanted)].map((server) => this.#build(server, this.#client));
    const refused: string[] = [];
    const accepted = (
      await Promise.all(
        candidates.map(async (runner) => {
          try {
            await runner.connect();
            return runner;
          } catch (error) {
            refused.push(keyOf(runner.parts.server));
            logger.error(
              { err: error, server: serverLabel(runner.parts.server) },
              this.#runners.has(keyOf(runner.parts.server))
                ? 'reload: the game server refused the new settings; this server keeps running with its previous ones'
                : 'reload: the game server refused the login; this server was not started (fix its settings and reload)',
            );
            await runner.close();
            this.#clientOf.delete(runner);
            return undefined;
          }
        }),
      )
    ).filter((runner): runner is ServerRunner => runner !== undefined);

    const leaving = [...plan.removed.map((id) => id.toLowerCase()), ...accepted.map((runner) => keyOf(runner.parts.server))]
      .map((key) => this.#runners.get(key))
      .filter((runner): runner is ServerRunner => runner !== undefined);
    await Promise.all(leaving.map((runner) => runner.stop(next.shutdown.drainMs)));
    for (const runner of leaving) this.#clientOf.delete(runner);
    if (stopping.aborted) {
      await Promise.all(accepted.map((runner) => runner.close()));
    } else {
      for (const runner of accepted) this.start(runner, true);
    }
    await this.#closeUnusedClients();

    // What runs: a refused change keeps the old entry, a refused addition is not there.
    const servers = next.servers.flatMap((server) => {
      if (!refused.includes(keyOf(server))) return [server];
      const old = running.servers.find((s) => keyOf(s) === keyOf(server));
      return old && this.#runners.has(keyOf(server)) ? [old] : [];
    });
    this.#config = { ...next, servers };
    return { config: this.#config, refused };
  }

  /** An old API client closes once no loop uses it (a refused change can keep one on it). */
  async #closeUnusedClients(): Promise<void> {
    const used = new Set([this.#client, ...this.#clientOf.values()]);
    for (const client of this.#everyClient) if (!used.has(client)) await client.close().catch(() => undefined);
    this.#everyClient = used;
  }
}

function keyOf(server: { readonly id: string }): string {
  return server.id.toLowerCase();
}
