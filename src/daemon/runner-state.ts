import type { Moves } from './state-table.js';

/** One server's runner: docs/design.md#one-servers-runner (`settling` is the leftovers', daemon/leftovers.ts). /healthz shows it. */
export type RunnerState = 'logging-in' | 'running' | 'draining' | 'stopped';

/**
 * The only moves between them; docs/design.md#one-servers-runner draws this table. A runner stops
 * without draining when its login was refused (a reload's) or its loop ended on its own (a fatal
 * error, its store's token refused).
 */
export const RUNNER_MOVES: Moves<RunnerState> = {
  'logging-in': ['running', 'draining', 'stopped'],
  running: ['draining', 'stopped'],
  draining: ['stopped'],
  stopped: [],
};
