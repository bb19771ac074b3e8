import type { Logger } from 'pino';

/**
 * The daemon's states and the only moves between them: the diagram of docs/design.md#the-daemon
 * (`loading` is `porter run` before the daemon exists). The daemon asks to move at each step of
 * its life; a move the diagram does not have is refused (the daemon then keeps its state), so a
 * reload that ends after a stop began cannot make a draining porter "running" again. /healthz
 * shows the state.
 */
export type DaemonState = 'starting' | 'logging-in' | 'running' | 'reloading' | 'draining' | 'stopped';

const MOVES: Readonly<Record<DaemonState, readonly DaemonState[]>> = {
  starting: ['logging-in', 'draining'],
  'logging-in': ['running', 'draining'],
  running: ['reloading', 'draining'],
  reloading: ['running', 'draining'],
  draining: ['stopped'],
  stopped: [],
};

export class DaemonLifecycle {
  readonly #logger: Logger;
  #state: DaemonState = 'starting';

  constructor(logger: Logger) {
    this.#logger = logger;
  }

  get state(): DaemonState {
    return this.#state;
  }

  /** Moves to `next` when the diagram allows it from here; says whether it did. */
  to(next: DaemonState): boolean {
    if (!MOVES[this.#state].includes(next)) return false;
    this.#logger.debug({ event: 'porter.state', from: this.#state, to: next }, 'porter state');
    this.#state = next;
    return true;
  }
}

/** One server's runner (docs/design.md#one-servers-runner); `settling` is the leftovers' (daemon/leftovers.ts). */
export type RunnerState = 'logging-in' | 'running' | 'draining' | 'stopped';
