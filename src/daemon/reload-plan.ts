import { isDeepStrictEqual } from 'node:util';
import type { Config, ResolvedServer } from '../config/schema.js';
import { serverLabel } from '../config/server-label.js';

/**
 * What a reloaded configuration changes in a running porter (docs/design.md#configuration):
 * which servers start, stop or restart, and which settings wait for a restart. Pure, so every
 * combination is tested without processes.
 */
export interface ReloadPlan {
  /** Why the new configuration is not used at all; the running one stays. */
  readonly rejected?: string;
  /** Settings that keep their running value until porter restarts. */
  readonly deferred: readonly string[];
  readonly added: readonly ResolvedServer[];
  /** Ids of servers that are no longer configured. */
  readonly removed: readonly string[];
  /** New settings of servers whose loop restarts after the command in hand. */
  readonly changed: readonly ResolvedServer[];
  /** The API address, routes or deadline changed: every loop restarts on a new HTTP client. */
  readonly newApiClient: boolean;
  readonly tokenChanged: boolean;
}

/** The parts of `api` an HTTP client is built from; the token is swapped in place, the budget waits. */
function clientSettings(api: Config['api']): unknown {
  return { baseUrl: api.baseUrl, timeoutMs: api.timeoutMs, routes: api.routes };
}

export function planReload(running: Config, next: Config): ReloadPlan {
  const none = { deferred: [], added: [], removed: [], changed: [], newApiClient: false, tokenChanged: false };
  if (running.stateDir !== next.stateDir) {
    return {
      ...none,
      rejected: `stateDir changed from ${running.stateDir} to ${next.stateDir}: the journal and lock of the running porter are in the old one, so this takes a restart (porter keeps running with the old configuration)`,
    };
  }
  const deferred: string[] = [];
  if (!isDeepStrictEqual(running.api.budget, next.api.budget)) {
    deferred.push('api.budget (a new budget in the middle of a window could spend what the running one already spent)');
  }
  if (!isDeepStrictEqual(running.health, next.health)) deferred.push('health (the endpoint keeps its address)');
  if (!isDeepStrictEqual(running.webhook, next.webhook)) {
    deferred.push(
      'webhook (the listener keeps its address and settings; its TLS files and the webhook secret are read again on every reload)',
    );
  }
  if (!isDeepStrictEqual(running.log, next.log)) deferred.push('log (the logger is made once)');
  if (!isDeepStrictEqual(running.history, next.history)) deferred.push('history (the delivery history keeps its bound)');

  const newApiClient = !isDeepStrictEqual(clientSettings(running.api), clientSettings(next.api));
  const everyLoop = newApiClient || running.poll.idleMs !== next.poll.idleMs;
  const before = new Map(running.servers.map((server) => [server.id.toLowerCase(), server]));
  const after = new Set(next.servers.map((server) => server.id.toLowerCase()));
  const added: ResolvedServer[] = [];
  const changed: ResolvedServer[] = [];
  for (const server of next.servers) {
    const old = before.get(server.id.toLowerCase());
    if (old === undefined) added.push(server);
    else if (everyLoop || !isDeepStrictEqual(old, server)) changed.push(server);
  }
  const removed = running.servers.filter((server) => !after.has(server.id.toLowerCase())).map((server) => server.id);
  return { deferred, added, removed, changed, newApiClient, tokenChanged: running.api.token !== next.api.token };
}

/** One line for the log: "added a, b; removed c; restarted d". */
export function describePlan(plan: ReloadPlan, running: Config): string {
  const label = (id: string) => serverLabel(running.servers.find((server) => server.id === id) ?? { id });
  const parts = [
    plan.added.length > 0 ? `added ${plan.added.map(serverLabel).join(', ')}` : '',
    plan.removed.length > 0 ? `removed ${plan.removed.map(label).join(', ')}` : '',
    plan.changed.length > 0 ? `restarted ${plan.changed.map(serverLabel).join(', ')}` : '',
    plan.tokenChanged ? 'a new API token' : '',
  ].filter(Boolean);
  return parts.length > 0 ? parts.join('; ') : 'no change';
}

/** The configuration porter runs with after applying `next`: what waits for a restart keeps its running value. */
export function effectiveConfig(running: Config, next: Config): Config {
  return {
    ...next,
    api: { ...next.api, budget: running.api.budget },
    health: running.health,
    webhook: running.webhook,
    log: running.log,
    history: running.history,
  };
}
