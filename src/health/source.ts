import type { ServerApiStats } from '../api/server-api.js';
import type { HistoryRecord } from '../delivery/history/history-record.js';
import type { LoopHealth } from '../delivery/loop.js';
import type { ExecutorStats } from '../protocols/executor.js';

/**
 * What /healthz and /metrics read from a running daemon, and nothing more. The daemon's own parts
 * satisfy it as they are; tests can hand in plain objects.
 */
export interface HealthSource {
  readonly servers: readonly HealthServerPart[];
  /** Where the daemon is in its lifecycle (docs/design.md#the-daemon): starting, logging-in, running, reloading, draining, stopped. */
  readonly state?: () => string;
  readonly journal: {
    readonly path: string;
    pending(serverId?: string): readonly unknown[];
    readonly lastWriteError: Error | undefined;
    /** Failed journal writes since start. */
    readonly writeFailures: number;
  };
  /** The stores and their servers; a store whose token the Seller API refused has `refused` (docs/design.md#many-stores). */
  readonly stores?: readonly StoreStatus[];
  /** Claims the journal holds that no configured store can report (docs/design.md#lifecycle): they stay PROCESSING on the platform. */
  readonly unreportable?: () => ReadonlyArray<{ readonly serverId: string; readonly id: string; readonly store: string | undefined }>;
  /** The delivery history, for /history; oldest first. */
  readonly history?: { read(): Promise<readonly HistoryRecord[]> };
}

export interface HealthServerPart {
  readonly server: { readonly id: string; readonly name?: string | undefined };
  /** Where its runner is (docs/design.md#one-servers-runner): logging-in, running, draining, stopped. */
  readonly state?: string;
  readonly executor: { stats(): ExecutorStats };
  readonly api: { stats(): ServerApiStats };
  readonly loop: { health(): LoopHealth };
}

export interface StoreStatus {
  /** The store's name; "default" for the store of `api`. */
  readonly name: string;
  /** Labels of the configured servers of the store. */
  readonly servers: readonly string[];
  /** Set while the store's servers are stopped because its token was refused: the HTTP status, the API's code, since when (clock ms). */
  readonly refused?: { readonly status: number; readonly code: string | undefined; readonly since: number };
}
