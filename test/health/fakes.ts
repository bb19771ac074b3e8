import type { ServerApiStats } from '../../src/api/server-api.js';
import type { RouteBudgetSnapshot } from '../../src/api/budget/budget.js';
import type { Clock } from '../../src/clock.js';
import type { LoopHealth } from '../../src/delivery/loop.js';
import type { HealthServerPart, HealthSource } from '../../src/health/source.js';

/** A clock the test moves by hand. */
export function manualClock(start = Date.UTC(2026, 0, 1)): Clock & { set(ms: number): void; advance(ms: number): void } {
  let now = start;
  return {
    now: () => now,
    sleep: () => Promise.resolve(),
    set: (ms) => {
      now = ms;
    },
    advance: (ms) => {
      now += ms;
    },
  };
}

const idleBudget: RouteBudgetSnapshot = {
  remaining: 120,
  used: 0,
  cap: 120,
  apiRemaining: undefined,
  windowEndsAt: undefined,
  blockedUntil: undefined,
  delayMs: 0,
  windowMs: 60_000,
};

/** One server's state, every field writable by the test. */
export interface FakeServerState {
  connected: boolean;
  reconnects: number;
  loop: { -readonly [K in keyof LoopHealth]: LoopHealth[K] };
  api: { -readonly [K in keyof ServerApiStats]: ServerApiStats[K] };
}

export function fakeServer(id: string, name?: string): { part: HealthServerPart; state: FakeServerState } {
  const state: FakeServerState = {
    connected: true,
    reconnects: 0,
    loop: { lastApiSuccessAt: undefined, lastApiError: undefined, lastDeliveryAt: undefined, inHand: undefined },
    api: {
      pulls: { claimed: 0, empty: 0, busy204: 0, unusable: 0, error: 0 },
      reports: { accepted: 0, alreadySettled: 0, refused: 0, error: 0 },
      rateLimited: 0,
      claimGapOpen: false,
      budget: { pull: idleBudget, done: idleBudget, fail: idleBudget },
    },
  };
  const part: HealthServerPart = {
    server: { id, ...(name === undefined ? {} : { name }) },
    executor: { stats: () => ({ connected: state.connected, reconnects: state.reconnects }) },
    api: { stats: () => structuredClone(state.api) },
    loop: { health: () => state.loop },
  };
  return { part, state };
}

export function fakeDaemon(
  servers: HealthServerPart[],
  journalDir: string,
): HealthSource & {
  pendingIds: { serverId: string; id: string }[];
  writeError: Error | undefined;
  writeFailures: number;
  journalPath: string;
} {
  const daemon = {
    servers,
    pendingIds: [] as { serverId: string; id: string }[],
    writeError: undefined as Error | undefined,
    writeFailures: 0,
    journalPath: `${journalDir}/journal.json`,
    journal: {
      get path() {
        return daemon.journalPath;
      },
      pending: (serverId?: string) => daemon.pendingIds.filter((e) => serverId === undefined || e.serverId === serverId),
      get lastWriteError() {
        return daemon.writeError;
      },
      get writeFailures() {
        return daemon.writeFailures;
      },
    },
  };
  return daemon;
}

export interface Sample {
  readonly name: string;
  readonly labels: Record<string, string>;
  readonly value: number;
}

/** Parses Prometheus text exposition lines (enough for the assertions here). */
export function parseMetrics(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)/.exec(line);
    if (!match) throw new Error(`not a Prometheus sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const pair of (match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[pair[1]!] = pair[2]!;
    samples.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  return samples;
}

export function sample(samples: Sample[], name: string, labels: Record<string, string> = {}): number | undefined {
  return samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value;
}
