import { serverLabel } from '../config/server-label.js';
import { accessSync, constants } from 'node:fs';
import { dirname } from 'node:path';
import type { HealthSource } from './source.js';
import { messageOf } from '../errors.js';

/**
 * Decides whether each server's delivery loop is healthy (docs/operations.md), as plain data the HTTP
 * layer turns into 200 or 503. A server is healthy when:
 * - its executor is connected (a script executor always is);
 * - the Seller API answered recently: no API error is pending, or the last success (or, before
 *   the first one, the start) is at most `apiStaleMs` ago. So a loop that is merely idle — the
 *   game server down, a long command running — is not blamed for not calling the API, and one
 *   failed call does not flap the status, but an API that keeps failing does;
 * - the journal is writable: its last write succeeded and the state directory is writable now
 *   (checked on every request, so a disk gone read-only shows before the next delivery fails).
 */

export interface HealthPolicy {
  /** How long API errors may go on without a success. Default: max(3 × poll.idleMs, 60 s). */
  readonly apiStaleMs: number;
  /** When porter started, for "no success yet". */
  readonly startedAt: number;
}

export function defaultApiStaleMs(pollIdleMs: number): number {
  return Math.max(3 * pollIdleMs, 60_000);
}

export interface JournalHealth {
  readonly writable: boolean;
  readonly backlog: number;
  readonly reason?: string;
  /** Claims no configured store can report ("server/id"), and why: they stay PROCESSING on the platform. */
  readonly unreportable?: { readonly commands: readonly string[]; readonly stores: readonly string[]; readonly reason: string };
}

export interface ServerHealth {
  readonly status: 'ok' | 'unhealthy';
  readonly id: string;
  /** Its runner's state (docs/design.md#one-servers-runner), when the source knows it. */
  readonly state?: string;
  readonly reasons: string[];
  readonly executorConnected: boolean;
  readonly reconnects: number;
  readonly lastApiSuccessAt: string | null;
  readonly lastApiError: string | null;
  readonly lastDeliveryAt: string | null;
  readonly inHand: string | null;
  readonly backlog: number;
}

export interface StoreHealth {
  /** token-refused: the Seller API refused the store's token and its servers are stopped until a reload. */
  readonly status: 'ok' | 'token-refused';
  readonly servers: readonly string[];
  readonly reason?: string;
  readonly since?: string;
}

/**
 * `degraded`: every running server is healthy, but a store's token was refused and its servers
 * are stopped, or the journal holds claims no configured store can report. Still HTTP 200: a restart (what an orchestrator does on a failing probe) cannot
 * mend a token and would interrupt the stores that deliver; the metric porter_store_token_refused
 * is what to alert on.
 */
export interface HealthReport {
  readonly status: 'ok' | 'degraded' | 'unhealthy';
  /** The daemon's state (docs/design.md#the-daemon), when the source knows it: a stop shows as draining. */
  readonly state?: string;
  readonly servers: Record<string, ServerHealth>;
  readonly stores?: Record<string, StoreHealth>;
  readonly journal: JournalHealth;
}

export function evaluateHealth(
  source: HealthSource,
  now: number,
  policy: HealthPolicy,
  redact: (text: string) => string = (t) => t,
): HealthReport {
  const journal = journalHealth(source);
  const servers: Record<string, ServerHealth> = {};
  for (const part of source.servers) {
    const loop = part.loop.health();
    const executor = part.executor.stats();
    const reasons: string[] = [];
    if (!executor.connected) {
      reasons.push(
        'executor not connected: the game server is unreachable or refused the connection; porter pulls nothing until it reconnects',
      );
    }
    const since = loop.lastApiSuccessAt ?? policy.startedAt;
    if (loop.lastApiError !== undefined && now - since > policy.apiStaleMs) {
      const what = loop.lastApiSuccessAt === undefined ? 'since start' : 'for';
      reasons.push(
        `Seller API not reachable: no successful call ${what} ${seconds(now - since)} (bound ${seconds(policy.apiStaleMs)}); last error: ${redact(loop.lastApiError)}`,
      );
    }
    if (journal.reason !== undefined) reasons.push(journal.reason);
    servers[serverLabel(part.server)] = {
      status: reasons.length === 0 ? 'ok' : 'unhealthy',
      id: part.server.id,
      ...(part.state !== undefined && { state: part.state }),
      reasons,
      executorConnected: executor.connected,
      reconnects: executor.reconnects,
      lastApiSuccessAt: iso(loop.lastApiSuccessAt),
      lastApiError: loop.lastApiError === undefined ? null : redact(loop.lastApiError),
      lastDeliveryAt: iso(loop.lastDeliveryAt),
      inHand: loop.inHand ?? null,
      backlog: source.journal.pending(part.server.id).length,
    };
  }
  const healthy = Object.values(servers).every((s) => s.status === 'ok') && journal.writable;
  const stores = storesHealth(source);
  const refused = Object.values(stores ?? {}).some((store) => store.status === 'token-refused');
  const degraded = refused || journal.unreportable !== undefined;
  const state = source.state?.();
  return {
    status: !healthy ? 'unhealthy' : degraded ? 'degraded' : 'ok',
    ...(state !== undefined && { state }),
    servers,
    ...(stores && { stores }),
    journal,
  };
}

function storesHealth(source: HealthSource): Record<string, StoreHealth> | undefined {
  if (source.stores === undefined) return undefined;
  const stores: Record<string, StoreHealth> = {};
  for (const store of source.stores) {
    const { refused } = store;
    stores[store.name] = refused
      ? {
          status: 'token-refused',
          servers: store.servers,
          reason: `the Seller API refused the store's token (${refused.status} ${refused.code ?? '(no code)'}): its servers are stopped; give it a new token and reload`,
          since: iso(refused.since) as string,
        }
      : { status: 'ok', servers: store.servers };
  }
  return stores;
}

function journalHealth(source: HealthSource): JournalHealth {
  const health = journalWritable(source);
  const stuck = source.unreportable?.() ?? [];
  if (stuck.length === 0) return health;
  const stores = [...new Set(stuck.map((c) => c.store ?? '(not recorded)'))];
  return {
    ...health,
    unreportable: {
      commands: stuck.map((c) => `${c.serverId}/${c.id}`),
      stores,
      reason: `the journal holds ${stuck.length} unreported command${stuck.length === 1 ? '' : 's'} claimed for stores no longer configured (${stores.join(', ')}): they stay PROCESSING on the platform; add the store back to report them, or settle them in the store dashboard`,
    },
  };
}

function journalWritable(source: HealthSource): JournalHealth {
  const backlog = source.journal.pending().length;
  const failed = source.journal.lastWriteError;
  if (failed) {
    return {
      writable: false,
      backlog,
      reason: `journal not writable: the last write failed (${errnoOf(failed)}); check the state directory's permissions and free space`,
    };
  }
  const dir = dirname(source.journal.path);
  try {
    accessSync(dir, constants.W_OK);
  } catch (error) {
    return {
      writable: false,
      backlog,
      reason: `journal not writable: ${dir} refuses writes (${errnoOf(error)}); check its permissions, mount and free space`,
    };
  }
  return { writable: true, backlog };
}

function errnoOf(error: unknown): string {
  return (error as NodeJS.ErrnoException).code ?? messageOf(error);
}

function iso(ms: number | undefined): string | null {
  return ms === undefined ? null : new Date(ms).toISOString();
}

function seconds(ms: number): string {
  return `${Math.round(ms / 1000)} s`;
}
