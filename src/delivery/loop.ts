import type { Logger } from 'pino';
import type { PullResult, ServerApi } from '../api/types.js';
import type { Clock } from '../clock.js';
import { PorterError } from '../errors.js';
import {
  CommandFailedError,
  CommandRefusedError,
  NotSentError,
  OutcomeUnknownError,
  assertSingleLine,
  type Executor,
} from '../executors/executor.js';
import { backoffDelay, type BackoffPolicy } from '../net/backoff.js';
import type { Journal, JournalEntry, Outcome } from './journal.js';
import { WakeSignal } from './wake.js';

/**
 * One server's delivery loop (DESIGN §2): wait until the game server is reachable, read who is
 * online, pull one command, journal the claim, run it, journal the outcome, report it, repeat.
 * It owns the order of these steps; every collaborator is passed in.
 */

export interface CommandPolicyCheck {
  check(command: string): { ok: true } | { ok: false; reason: string };
}

export interface DeliveryObserver {
  onDelivery?(event: { serverId: string; id: string; result: Outcome['result']; ms: number }): void;
  onPull?(event: { serverId: string; result: 'claimed' | 'empty' | 'busy' | 'unusable' | 'error' }): void;
}

export interface DeliveryLoopOptions {
  readonly serverId: string;
  readonly api: ServerApi;
  readonly executor: Executor;
  readonly players: { get(signal?: AbortSignal): Promise<string[]> };
  readonly journal: Journal;
  readonly policy: CommandPolicyCheck;
  /** Returns the failure reason when the game's answer means the command failed. */
  readonly failureIn: (answer: string) => string | null;
  /** How long to wait before the next idle pull; the budget-aware pacing lives behind this. */
  readonly idleDelay: () => number;
  /** Milliseconds until the pull route's budget allows a call (0 = now). */
  readonly pullDelay: () => number;
  readonly notSentRetryMs: number;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly observer?: DeliveryObserver;
}

export interface StopSignals {
  /** Stop pulling: set on SIGTERM / SIGINT. */
  readonly stop: AbortSignal;
  /** Give up on whatever is in hand: the drain bound ran out. Leaves it journaled. */
  readonly hard: AbortSignal;
}

export interface LoopHealth {
  readonly executorReady: boolean;
  readonly lastApiSuccessAt: number | undefined;
  readonly lastApiError: string | undefined;
  readonly lastDeliveryAt: number | undefined;
  readonly inHand: string | undefined;
}

const PLAN_RETRY_MS = 60_000;
/** API trouble (5xx, timeouts, resets) and reports not yet accepted: 0.5 s doubling up to 30 s. */
const API_BACKOFF: BackoffPolicy = { initialMs: 500, maxMs: 30_000 };
/** Between "the game server dropped while we read its players" and waiting for it to be back. */
const GAME_SERVER_RECHECK_MS = 100;
/** A claim the API gave us with an id porter cannot use: nothing to report, slow down. */
const UNUSABLE_CLAIM_PAUSE_MS = 5_000;

export class DeliveryLoop {
  readonly #o: DeliveryLoopOptions;
  readonly #log: Logger;
  readonly #wake = new WakeSignal();
  #lastApiSuccessAt: number | undefined;
  #lastApiError: string | undefined;
  #lastDeliveryAt: number | undefined;
  #inHand: string | undefined;

  constructor(options: DeliveryLoopOptions) {
    this.#o = options;
    // The caller's logger already names the server.
    this.#log = options.logger;
  }

  /** A player joined: their online-only commands just became runnable, so pull now. */
  wake(): void {
    this.#wake.wake();
  }

  health(): LoopHealth {
    return {
      executorReady: this.#o.executor.isReady(),
      lastApiSuccessAt: this.#lastApiSuccessAt,
      lastApiError: this.#lastApiError,
      lastDeliveryAt: this.#lastDeliveryAt,
      inHand: this.#inHand,
    };
  }

  /** Resolves when stopped; rejects with a PorterError whose exitCode is 78 on a credentials error. */
  async run(signals: StopSignals): Promise<void> {
    await this.settleJournal(signals.hard);
    let failures = 0;
    while (!signals.stop.aborted) {
      try {
        await this.#o.executor.waitReady(signals.stop);
        await this.#waitForPullBudget(signals.stop);
        const online = await this.#o.players.get(signals.stop);
        if (signals.stop.aborted) break;
        // The pull itself is not aborted by stop: a command it claims is run (DESIGN §2 graceful stop).
        const result = await this.#o.api.pull(online, signals.hard);
        this.#apiSucceeded();
        failures = 0;
        await this.#handlePull(result, signals);
      } catch (error) {
        if (signals.stop.aborted && isAbort(error)) break;
        if (isFatal(error)) throw error;
        // The game server went away while its players were read: wait for it, not for the API.
        if (error instanceof NotSentError) {
          await this.#o.clock.sleep(GAME_SERVER_RECHECK_MS, signals.stop).catch(() => undefined);
          continue;
        }
        const wait = this.#pauseAfter(error, failures++);
        await this.#o.clock.sleep(wait, signals.stop).catch(() => undefined);
      }
    }
  }

  /** Reports what a previous run left in the journal before anything new is claimed. */
  async settleJournal(hard: AbortSignal): Promise<void> {
    for (const entry of this.#o.journal.pending(this.#o.serverId)) {
      const outcome = entry.outcome ?? unknownAfterRestart(entry);
      if (!entry.outcome) {
        this.#o.journal.recordOutcome(entry.serverId, entry.id, outcome, this.#o.clock.now());
      }
      this.#log.warn({ id: entry.id, outcome: outcome.result }, 'reporting a command left over from the previous run');
      await this.#report(entry.id, outcome, hard);
    }
    this.#o.journal.flush();
  }

  async #handlePull(result: PullResult, signals: StopSignals): Promise<void> {
    switch (result.kind) {
      case 'claimed':
        this.#o.observer?.onPull?.({ serverId: this.#o.serverId, result: 'claimed' });
        await this.#deliver(result.id, result.command, signals);
        return; // pull again at once: more may be due
      case 'unusable':
        this.#o.observer?.onPull?.({ serverId: this.#o.serverId, result: 'unusable' });
        this.#log.error({ reason: result.reason }, 'the API answered a pull with a claim porter cannot use or report');
        await this.#o.clock.sleep(UNUSABLE_CLAIM_PAUSE_MS, signals.stop).catch(() => undefined);
        return;
      case 'empty':
        this.#o.observer?.onPull?.({ serverId: this.#o.serverId, result: result.status === 204 ? 'busy' : 'empty' });
        this.#o.journal.flush(); // idle: a good moment to write settled removals
        await this.#wake.sleepUnlessWoken((signal) =>
          this.#o.clock.sleep(this.#o.idleDelay(), AbortSignal.any([signal, signals.stop])),
        );
    }
  }

  async #deliver(id: string, command: unknown, signals: StopSignals): Promise<void> {
    const { journal, clock, serverId } = this.#o;
    const started = clock.now();
    // The claim is written first, before any other work: it closes the claim gap as far as porter can.
    journal.claim(serverId, id, typeof command === 'string' ? command : undefined, started);
    this.#inHand = id;
    let fatal: unknown;
    let outcome: Outcome | typeof ABANDONED;
    try {
      outcome = await this.#run(id, command, signals.hard);
    } catch (error) {
      if (!isFatal(error)) throw error;
      fatal = error;
      outcome = { result: 'failed', reason: `not sent: ${(error as Error).message}` };
    }
    if (outcome === ABANDONED) {
      // The drain bound ran out mid-command: leave the claim unknown; the next start settles it.
      this.#inHand = undefined;
      return;
    }
    journal.recordOutcome(serverId, id, outcome, clock.now());
    const ms = clock.now() - started;
    await this.#report(id, outcome, signals.hard);
    this.#inHand = undefined;
    this.#lastDeliveryAt = clock.now();
    this.#o.observer?.onDelivery?.({ serverId, id, result: outcome.result, ms });
    const line = { id, outcome: outcome.result, ms, command: typeof command === 'string' ? command : undefined };
    if (outcome.result === 'done') this.#log.info(line, 'delivered');
    else this.#log.warn({ ...line, reason: outcome.reason }, 'delivery failed');
    if (fatal) throw fatal;
  }

  /** Decides the outcome of one claimed command. Never runs a command twice. */
  async #run(id: string, command: unknown, hard: AbortSignal): Promise<Outcome | typeof ABANDONED> {
    if (typeof command !== 'string') {
      return failed(`the API's claim has no command text (got ${command === null ? 'null' : typeof command}); nothing was run`);
    }
    try {
      assertSingleLine(command);
    } catch (error) {
      return failed((error as Error).message);
    }
    const verdict = this.#o.policy.check(command);
    if (!verdict.ok) return failed(`refused, not sent: ${verdict.reason}`);

    const { executor, clock } = this.#o;
    const giveUpAt = clock.now() + this.#o.notSentRetryMs;
    for (let attempt = 0; ; attempt++) {
      try {
        const answer = await executor.execute(command, { id, serverId: this.#o.serverId }, hard);
        const failure = this.#o.failureIn(answer);
        return failure === null ? { result: 'done' } : failed(`the game answered: ${failure}`);
      } catch (error) {
        if (error instanceof NotSentError) {
          const notSent = () => failed(`not sent: the game server was unreachable for ${this.#o.notSentRetryMs} ms (${error.message})`);
          const left = giveUpAt - clock.now();
          if (left <= 0 || hard.aborted) return notSent();
          this.#log.warn({ id, attempt, err: error.message }, 'command not sent yet: waiting for the game server');
          await this.#waitReadyWithin(left, hard);
          if (!executor.isReady()) return notSent();
          continue;
        }
        if (error instanceof OutcomeUnknownError) {
          return failed(`outcome unknown: ${error.message}; not resent, so it cannot run twice — retry it from the dashboard if it did not arrive`);
        }
        if (error instanceof CommandRefusedError) return failed(`refused, not sent: ${error.message}`);
        if (error instanceof CommandFailedError) return failed(error.message);
        if (isAbort(error) && hard.aborted) return ABANDONED;
        if (isFatal(error)) throw error;
        return failed(`outcome unknown: ${(error as Error).message ?? String(error)}`);
      }
    }
  }

  async #waitReadyWithin(ms: number, hard: AbortSignal): Promise<void> {
    const signal = AbortSignal.any([hard, AbortSignal.timeout(Math.max(1, ms))]);
    try {
      await this.#o.executor.waitReady(signal);
    } catch (error) {
      if (isFatal(error)) throw error;
    }
  }

  /** Retried until the API accepts it; a 404/409 means the platform already settled it. */
  async #report(id: string, outcome: Outcome, hard: AbortSignal): Promise<void> {
    const { api, journal, serverId, clock } = this.#o;
    for (let attempt = 0; !hard.aborted; attempt++) {
      try {
        const answer = outcome.result === 'done' ? await api.done(id, hard) : await api.fail(id, outcome.reason, hard);
        this.#apiSucceeded();
        if (answer === 'already-settled') {
          this.#log.warn({ id }, 'the API says this command was already settled (404/409); moving on');
        }
        journal.settle(serverId, id);
        return;
      } catch (error) {
        if (hard.aborted) break;
        if (isFatal(error)) throw error;
        const wait = this.#pauseAfter(error, attempt);
        this.#log.warn({ id, attempt, retryInMs: wait }, 'report not accepted yet; it stays in the journal and is retried');
        await clock.sleep(wait, hard).catch(() => undefined);
      }
    }
    this.#log.warn({ id }, 'stopped before the report was accepted: it stays in the journal and is reported on the next start');
  }

  async #waitForPullBudget(stop: AbortSignal): Promise<void> {
    for (let delay = this.#o.pullDelay(); delay > 0; delay = this.#o.pullDelay()) {
      await this.#o.clock.sleep(delay, stop);
    }
  }

  #apiSucceeded(): void {
    this.#lastApiSuccessAt = this.#o.clock.now();
    this.#lastApiError = undefined;
  }

  /** How long to pause after a failed API call or executor wait, logging what happened. */
  #pauseAfter(error: unknown, attempt: number): number {
    const status = (error as { status?: unknown }).status;
    const message = (error as Error)?.message ?? String(error);
    this.#lastApiError = message;
    if (status === 429) return 0; // the budget already knows the Retry-After and holds the next call
    if (status === 402) {
      this.#log.error({ err: message }, `the store's plan does not include API access (402): retrying every ${PLAN_RETRY_MS / 1000} s`);
      return PLAN_RETRY_MS;
    }
    const wait = backoffDelay(attempt + 1, API_BACKOFF);
    this.#log.warn({ err: message, retryInMs: wait }, 'pull failed; backing off');
    this.#o.observer?.onPull?.({ serverId: this.#o.serverId, result: 'error' });
    return wait;
  }
}

/** The drain bound ran out while the command was running: no outcome is known or recorded. */
const ABANDONED = Symbol('abandoned at the drain bound');

function failed(reason: string): Outcome {
  return { result: 'failed', reason };
}

function unknownAfterRestart(entry: JournalEntry): Outcome {
  return failed(
    `outcome unknown: porter stopped after claiming this command at ${new Date(entry.claimedAt).toISOString()} and before recording its result; it was not run again — retry it from the dashboard if it did not arrive`,
  );
}

function isFatal(error: unknown): boolean {
  return error instanceof PorterError && error.exitCode === 78;
}

function isAbort(error: unknown): boolean {
  return (error as Error)?.name === 'AbortError' || (error as Error)?.name === 'TimeoutError';
}
