import { isDeepStrictEqual } from 'node:util';
import type { Config, ResolvedServer } from '../config/schema.js';
import { serverLabel } from '../config/server-label.js';
import { clientSettings, storeLabel, type StoreKey } from './stores.js';

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
  /** Stores (undefined: the default one) whose address, routes, deadline or token file changed: their loops restart on a new client. */
  readonly newClientStores: readonly StoreKey[];
  /** Stores whose token changed: every loop of theirs sends the new one from its next call. */
  readonly newTokenStores: readonly StoreKey[];
  /** Names of `stores` entries added and removed. */
  readonly storesAdded: readonly string[];
  readonly storesRemoved: readonly string[];
}

export function planReload(running: Config, next: Config): ReloadPlan {
  const none = {
    deferred: [],
    added: [],
    removed: [],
    changed: [],
    newApiClient: false,
    tokenChanged: false,
    newClientStores: [],
    newTokenStores: [],
    storesAdded: [],
    storesRemoved: [],
  };
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

  const runningStores = running.stores ?? {};
  const nextStores = next.stores ?? {};
  const kept = Object.keys(nextStores).filter((name) => runningStores[name] !== undefined);
  for (const name of kept) {
    if (!isDeepStrictEqual(runningStores[name]!.budget, nextStores[name]!.budget)) {
      deferred.push(`stores.${name}.budget (a new budget in the middle of a window could spend what the running one already spent)`);
    }
  }
  const newApiClient = !isDeepStrictEqual(clientSettings(running.api), clientSettings(next.api));
  const newClientStores: StoreKey[] = [
    ...(newApiClient ? [undefined] : []),
    ...kept.filter((name) => !isDeepStrictEqual(clientSettings(runningStores[name]!), clientSettings(nextStores[name]!))),
  ];
  const newTokenStores: StoreKey[] = [
    ...(running.api.token !== next.api.token ? [undefined] : []),
    ...kept.filter((name) => runningStores[name]!.token !== nextStores[name]!.token),
  ];
  const everyLoop = running.poll.idleMs !== next.poll.idleMs;
  const before = new Map(running.servers.map((server) => [server.id.toLowerCase(), server]));
  const after = new Set(next.servers.map((server) => server.id.toLowerCase()));
  const added: ResolvedServer[] = [];
  const changed: ResolvedServer[] = [];
  for (const server of next.servers) {
    const old = before.get(server.id.toLowerCase());
    if (old === undefined) added.push(server);
    else if (everyLoop || newClientStores.includes(server.store) || !isDeepStrictEqual(old, server)) changed.push(server);
  }
  const removed = running.servers.filter((server) => !after.has(server.id.toLowerCase())).map((server) => server.id);
  return {
    deferred,
    added,
    removed,
    changed,
    newApiClient,
    tokenChanged: running.api.token !== next.api.token,
    newClientStores,
    newTokenStores,
    storesAdded: Object.keys(nextStores).filter((name) => runningStores[name] === undefined),
    storesRemoved: Object.keys(runningStores).filter((name) => nextStores[name] === undefined),
  };
}

/** One line for the log: "added a, b; removed c; restarted d". */
export function describePlan(plan: ReloadPlan, running: Config): string {
  const label = (id: string) => serverLabel(running.servers.find((server) => server.id === id) ?? { id });
  const parts = [
    plan.added.length > 0 ? `added ${plan.added.map(serverLabel).join(', ')}` : '',
    plan.removed.length > 0 ? `removed ${plan.removed.map(label).join(', ')}` : '',
    plan.changed.length > 0 ? `restarted ${plan.changed.map(serverLabel).join(', ')}` : '',
    plan.storesAdded.length > 0 ? `stores added ${plan.storesAdded.join(', ')}` : '',
    plan.storesRemoved.length > 0 ? `stores removed ${plan.storesRemoved.join(', ')}` : '',
    plan.tokenChanged ? 'a new API token' : '',
    ...plan.newTokenStores.filter((store) => store !== undefined).map((store) => `a new API token for store ${storeLabel(store)}`),
  ].filter(Boolean);
  return parts.length > 0 ? parts.join('; ') : 'no change';
}

/** The configuration porter runs with after applying `next`: what waits for a restart keeps its running value. */
export function effectiveConfig(running: Config, next: Config): Config {
  const stores =
    next.stores === undefined
      ? undefined
      : Object.fromEntries(
          Object.entries(next.stores).map(([name, store]) => {
            const old = running.stores?.[name];
            return [name, old === undefined ? store : { ...store, budget: old.budget }];
          }),
        );
  return {
    ...next,
    ...(stores !== undefined && { stores }),
    api: { ...next.api, budget: running.api.budget },
    health: running.health,
    webhook: running.webhook,
    log: running.log,
    history: running.history,
  };
}
