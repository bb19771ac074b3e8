import { serverLabel } from '../config/server-label.js';
import { storeLabel } from './stores.js';
import type { Logger } from 'pino';
import type { ApiClient } from '../api/wire/client.js';
import { createServerApi } from '../api/server-api.js';
import type { Budget } from '../api/budget/budget.js';
import type { Clock } from '../clock.js';
import type { ResolvedServer } from '../config/schema.js';
import type { DeliveryLoopOptions, DeliveryObserver } from '../delivery/loop.js';
import { DeliveryLoop } from '../delivery/loop.js';
import { idleDelay } from '../api/budget/idle-pacing.js';
import type { Journal } from '../delivery/journal/journal.js';
import type { DeliveryHistory } from '../delivery/history/history.js';
import type { Executor } from '../protocols/executor.js';
import { PlayerCache } from '../players/cache.js';
import { playerReader } from '../players/reader.js';
import { gameFor } from '../games/registry.js';
import { compileCommandPolicy } from '../policy/command-policy.js';
import { compileFailurePatterns, failureIn } from '../policy/failure-patterns.js';
import { createExecutor } from '../protocols/executor-registry.js';

/** Everything one configured server needs, assembled when it starts (at start-up or after a reload). */
export interface ServerParts {
  readonly server: ResolvedServer;
  readonly executor: Executor;
  readonly players: PlayerCache;
  readonly budget: Budget;
  readonly api: ReturnType<typeof createServerApi>;
  readonly loop: DeliveryLoop;
}

export interface SharedParts {
  readonly client: ApiClient;
  /** The server's call budget: it outlives the server's loop, so a restarted loop cannot overspend the window. */
  readonly budget: Budget;
  readonly pollIdleMs: number;
  /** Webhook events wake this server: idle polling stays at pollIdleMs, the safety net. */
  readonly webhookWakes?: boolean;
  readonly journal: Journal;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Removes every secret porter holds from a text (failure reasons are journaled and sent). */
  readonly scrub: (text: string) => string;
  readonly observer?: DeliveryObserver;
  /** The delivery history every loop records its settled commands in. */
  readonly history?: DeliveryHistory;
  /** Holds every pull while claims are not allowed (Agones). */
  readonly gate?: DeliveryLoopOptions['gate'];
}

/** Async only for the executor: its transport's code is imported when the first server of that type is built. */
export async function buildServer(server: ResolvedServer, shared: SharedParts): Promise<ServerParts> {
  const { client, journal, clock, budget } = shared;
  const logger = shared.logger.child({ server: serverLabel(server) });
  const preset = gameFor(server.players);
  const executor = await createExecutor(server.executor, { logger, clock, passwordHint: preset.rconPassword });
  const read = playerReader(server.players, preset, executor, logger);
  const api = createServerApi({ client, serverId: server.id, budget, clock, logger });
  const patterns = compileFailurePatterns(preset, server.failurePatterns);
  const players = new PlayerCache({
    read,
    refreshMs: server.players.refreshMs,
    joinGraceMs: server.players.joinGraceMs,
    clock,
    logger,
    // Called only when a later read finds someone new or a join grace ends: never before the loop below exists.
    onJoin: () => loop.wake(),
  });
  const loop = new DeliveryLoop({
    serverId: server.id,
    store: storeLabel(server.store),
    api,
    executor,
    players,
    journal,
    policy: compileCommandPolicy(preset, server.commandPolicy),
    failureIn: (answer) => failureIn(answer, patterns),
    idleDelay: () => idleDelay(budget.routeSnapshot('pull'), clock.now(), shared.pollIdleMs, shared.webhookWakes),
    pullDelay: () => budget.delayFor('pull'),
    notSentRetryMs: server.notSentRetryMs,
    scrub: shared.scrub,
    clock,
    logger,
    ...(shared.observer ? { observer: shared.observer } : {}),
    ...(shared.gate ? { gate: shared.gate } : {}),
    ...(shared.history ? { history: { record: (delivery) => shared.history?.record({ ...delivery, serverName: server.name }) } } : {}),
  });
  return { server, executor, players, budget, api, loop };
}
