import type { Logger } from 'pino';
import { StateTable, type Moves } from './state-table.js';

/**
 * The daemon's states: docs/design.md#the-daemon (`loading` is `porter run` before the daemon
 * exists). /healthz shows the state.
 */
export type DaemonState = 'starting' | 'logging-in' | 'running' | 'reloading' | 'draining' | 'stopped';

/** The only moves between them; docs/design.md#the-daemon draws this table, and test/daemon/lifecycle-diagram.test.ts holds one to the other. */
export const DAEMON_MOVES: Moves<DaemonState> = {
  starting: ['logging-in', 'draining'],
  'logging-in': ['running', 'draining'],
  running: ['reloading', 'draining'],
  reloading: ['running', 'draining'],
  draining: ['stopped'],
  stopped: [],
};

/** What a stop does to the servers: the lifecycle decides when, the fleet does it. */
interface StopActions {
  /** The first stop: no new pulls anywhere; the command in hand gets `drainMs` to finish and be reported. */
  readonly drain: (drainMs: number) => void;
  /** A second stop signal: the command in hand is given up at once (it stays journaled). */
  readonly force: () => void;
}

/**
 * The daemon's state and its stop. Every move goes through DAEMON_MOVES; a step of start-up or
 * of a reload is skipped once a stop came (`advance` says so), and a stop, from whatever cause,
 * comes here: the first drains within the `shutdown.drainMs` it reads then, a second signal
 * forces. Being stopping and being in `draining` or `stopped` are the same fact, so a reload
 * that ends after a stop began cannot make a draining porter "running" again.
 */
export class DaemonLifecycle {
  readonly #logger: Logger;
  readonly #actions: StopActions;
  readonly #shutdownMs: () => number;
  readonly #moves: StateTable<DaemonState>;
  readonly #stop = new AbortController();
  /** Resolves once a stop was asked for, whenever that was. */
  readonly stopRequested: Promise<void>;
  #drainMs = 0;

  /** `shutdownMs` reads `shutdown.drainMs` of the configuration running when the stop comes. */
  constructor(logger: Logger, deps: { readonly shutdownMs: () => number; readonly actions: StopActions }) {
    this.#logger = logger;
    this.#actions = deps.actions;
    this.#shutdownMs = deps.shutdownMs;
    this.#moves = new StateTable(DAEMON_MOVES, 'starting', (from, to) => {
      this.#logger.debug({ event: 'porter.state', from, to }, 'porter state');
      if (to === 'draining') this.#stop.abort();
    });
    this.stopRequested = new Promise<void>((resolve) => this.#stop.signal.addEventListener('abort', () => resolve(), { once: true }));
  }

  get state(): DaemonState {
    return this.#moves.state;
  }

  get stopping(): boolean {
    return this.#stop.signal.aborted;
  }

  /** Aborted when the daemon starts draining: what start-up and reloads wait on gives up then. */
  get stopSignal(): AbortSignal {
    return this.#stop.signal;
  }

  /** The drain's bound, fixed when the stop came (0 for a halt). */
  get drainMs(): number {
    return this.#drainMs;
  }

  /**
   * A step of start-up or of a reload: false once a stop came (the caller skips the step, and the
   * drain follows). Any other refusal is a defect and throws.
   */
  advance(next: 'logging-in' | 'running' | 'reloading'): boolean {
    if (this.stopping) return false;
    this.#moves.must(next);
    return true;
  }

  /**
   * A stop signal (SIGTERM, SIGINT, the caller's abort, Agones' Shutdown, a fatal error): the
   * first one drains, a second forces. Once stopped there is nothing left to stop.
   */
  stop(): void {
    if (this.state === 'stopped') return;
    if (this.stopping) {
      this.#logger.warn({ event: 'stop.forced' }, 'second stop signal: giving up on the command in hand (it stays journaled)');
      this.#actions.force();
      return;
    }
    this.#drainMs = this.#shutdownMs();
    this.#logger.info({ event: 'porter.stopping', drainMs: this.#drainMs }, 'stopping: no new pulls; finishing the command in hand');
    this.#moves.must('draining');
    this.#actions.drain(this.#drainMs);
  }

  /** A stop that must not force when one came first (a store refused while porter already drains). */
  stopOnce(): void {
    if (!this.stopping) this.stop();
  }

  /** The end of serve(), however it ended: stopping without a drain when no stop came (serve() failed). */
  halt(): void {
    if (!this.stopping) this.#moves.must('draining');
  }

  /** Everything is closed: the last move. */
  finish(): void {
    this.#moves.must('stopped');
  }
}
