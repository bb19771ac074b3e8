import type { Logger } from 'pino';
import { startDeadline, type Clock } from '../clock.js';
import { serverLabel } from '../config/server-label.js';
import { isConfigurationError, messageOf } from '../errors.js';
import { isOutOfFiles } from '../net/open-files.js';
import type { ServerParts } from './build-server.js';
import { RUNNER_MOVES, type RunnerState } from './runner-state.js';
import { StateTable } from './state-table.js';

/**
 * One configured server's life: connect, watch its players, run its delivery loop, and stop on
 * its own (a reload removed or changed it) or with the rest of porter. Stopping is graceful: no
 * new pull, the command in hand is finished and reported, bounded by `shutdown.drainMs`.
 */
export class ServerRunner {
  readonly parts: ServerParts;
  readonly #logger: Logger;
  readonly #clock: Clock;
  readonly #stop = new AbortController();
  readonly #hard = new AbortController();
  #cancelDrainBound = () => {};
  #loop: Promise<void> | undefined;
  #closed: Promise<void> | undefined;
  /** Every move through RUNNER_MOVES; leaving logging-in or running for good aborts `#stop`, so the two are one fact. */
  readonly #moves = new StateTable(RUNNER_MOVES, 'logging-in', (_from, to) => {
    if (to === 'draining' || to === 'stopped') this.#stop.abort();
  });

  constructor(parts: ServerParts, deps: { readonly logger: Logger; readonly clock: Clock }) {
    this.parts = parts;
    this.#logger = deps.logger.child({ server: serverLabel(parts.server) });
    this.#clock = deps.clock;
  }

  /**
   * The first login. A wrong password rejects (CredentialsError); an unreachable game server is
   * only logged: the loop pulls nothing until it is back.
   */
  async connect(): Promise<void> {
    try {
      await this.parts.executor.connect(this.#stop.signal);
    } catch (error) {
      if (isConfigurationError(error)) throw error;
      // Stopped while logging in (porter stopping, or a reload's login abandoned): nothing to report.
      if (this.#stop.signal.aborted) return;
      if (isOutOfFiles(error)) {
        this.#logger.warn(
          { event: 'game.openfiles', err: messageOf(error) },
          'no open file left for this game server connection (EMFILE): nothing is pulled for this server until it connects; retrying with backoff',
        );
        return;
      }
      this.#logger.warn(
        { event: 'game.unreachable', err: messageOf(error) },
        'game server not reachable yet: nothing is pulled until it is; retrying with backoff',
      );
    }
  }

  /** Where it is in docs/design.md#one-servers-runner (for /healthz). */
  get state(): RunnerState {
    return this.#moves.state;
  }

  /**
   * Runs the loop until stopped; rejects with the loop's fatal error (a PorterError with exit 78 on
   * credentials). A runner told to stop first (born while porter stops) stays draining: its loop
   * sees the stop and pulls nothing.
   */
  run(): Promise<void> {
    if (this.#loop === undefined && !this.stopping) this.#moves.must('running');
    this.parts.players.startWatching(this.#stop.signal);
    this.#loop ??= this.parts.loop.run({ stop: this.#stop.signal, hard: this.#hard.signal });
    return this.#loop;
  }

  get stopping(): boolean {
    return this.#stop.signal.aborted;
  }

  /** No new pulls; the command in hand gets `drainMs` to finish and be reported, then it is abandoned (it stays journaled). */
  requestStop(drainMs: number): void {
    // Refused once draining (a second request keeps the first bound) or stopped.
    if (!this.#moves.to('draining')) return;
    this.#cancelDrainBound = startDeadline(this.#clock, drainMs, () => this.#hard.abort());
  }

  /** Gives up on the command in hand at once (a second stop signal). */
  abandon(): void {
    // Refused when already draining or stopped: the hand is given up all the same.
    this.#moves.to('draining');
    this.#hard.abort();
  }

  /** Stops (see requestStop), waits for the loop, and closes the game server connection. */
  async stop(drainMs: number): Promise<void> {
    this.requestStop(drainMs);
    await this.#loop?.catch(() => undefined);
    await this.close();
  }

  /** Closes the game server connection; the loop must have ended or never run. Safe to call twice. */
  close(): Promise<void> {
    // Refused only when closed before: the connection's close is under way or done.
    if (this.#moves.to('stopped')) this.#cancelDrainBound();
    this.#closed ??= this.parts.executor.close().catch(() => undefined);
    return this.#closed;
  }
}
