import type { Logger } from 'pino';
import { ApiHealth } from '../api/answers/api-health.js';
import { PlanRequiredError, RateLimitedError } from '../api/errors.js';
import type { PullResult, ServerApi } from '../api/types.js';
import type { Clock } from '../clock.js';
import {
  CommandFailedError,
  CommandRefusedError,
  isConfigurationError,
  messageOf,
  NotSentError,
  OutcomeUnknownError,
  type PorterError,
} from '../errors.js';
import { assertSingleLine, type Executor } from '../protocols/executor.js';
import { backoffDelay, type BackoffPolicy } from '../net/backoff.js';
import { JournalWriteError, type Journal, type Outcome } from './journal/journal.js';
import type { FailureKind, SettledDelivery } from './history/history-record.js';
import { Reporter, unknownAfterRestart } from './reporter.js';
import { WakeSignal } from '../wake-signal.js';
import { withDeadline } from '../abort.js';
import type { PullGate } from './claim-gates.js';

/**
 * One server's delivery loop (docs/design.md#delivery-semantics): wait until the game server is reachable, read who is
 * online, pull one command, journal the claim, run it, journal the outcome, report it, repeat.
 * It owns the order of these steps; every collaborator is passed in.
 */

export interface CommandPolicyCheck {
  check(command: string): { ok: true } | { ok: false; reason: string };
}

export interface DeliveryObserver {
  onDelivery?(event: { serverId: string; id: string; result: Outcome['result']; ms: number }): void;
}

export interface DeliveryLoopOptions {
  readonly serverId: string;
  /** The store this server sells for, by the name logs use; journaled with each claim (docs/design.md#lifecycle). */
  readonly store?: string;
  readonly api: ServerApi;
  readonly executor: Executor;
  readonly players: { get(signal?: AbortSignal): Promise<string[]> };
  readonly journal: Journal;
  readonly policy: CommandPolicyCheck;
  /** Returns the failure reason when the game's answer means the command failed. */
  readonly failureIn: (answer: string) => string | null;
  /**
   * Holds the next pull until claims are allowed (an Agones GameServer not Ready yet); the pull
   * in flight and the command in hand are never interrupted by it. `isOpen` is asked again right
   * before each pull is sent.
   */
  readonly gate?: PullGate;
  /** How long to wait before the next idle pull; the budget-aware pacing lives behind this. */
  readonly idleDelay: () => number;
  /** Milliseconds until the pull route's budget allows a call (0 = now). */
  readonly pullDelay: () => number;
  readonly notSentRetryMs: number;
  /**
   * Removes every secret porter holds (API token, every game-server password) from a text. Applied
   * to each failure reason before it is journaled, reported or logged: a script's stderr or a
   * game's answer may echo a password.
   */
  readonly scrub?: (text: string) => string;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly observer?: DeliveryObserver;
  /**
   * The delivery history: told of every command whose outcome is decided, once, as soon as it is
   * (before the report, which may wait for the API). It must return at once: it queues, the disk waits.
   */
  readonly history?: { record(delivery: SettledDelivery): void };
}

interface StopSignals {
  /** Stop pulling: set on SIGTERM / SIGINT. */
  readonly stop: AbortSignal;
  /** Give up on whatever is in hand: the drain bound ran out. Leaves it journaled. */
  readonly hard: AbortSignal;
}

export interface LoopHealth {
  readonly lastApiSuccessAt: number | undefined;
  readonly lastApiError: string | undefined;
  readonly lastDeliveryAt: number | undefined;
  readonly inHand: string | undefined;
}

/** Between "the game server dropped while we read its players" and waiting for it to be back. */
const GAME_SERVER_RECHECK_MS = 100;
/** A claim the API gave us with an id porter cannot use: nothing to report, slow down. */
const UNUSABLE_CLAIM_PAUSE_MS = 5_000;
/** While the journal cannot be written, how often porter tries again (nothing is claimed meanwhile). */
const JOURNAL_RETRY: BackoffPolicy = { initialMs: 1_000, maxMs: 10_000 };

export class DeliveryLoop {
  readonly #o: DeliveryLoopOptions;
  readonly #log: Logger;
  readonly #wake = new WakeSignal();
  readonly #reporter: Reporter;
  readonly #apiHealth: ApiHealth;
  #lastDeliveryAt: number | undefined;
  #inHand: string | undefined;

  constructor(options: DeliveryLoopOptions) {
    this.#o = options;
    // The caller's logger already names the server.
    this.#log = options.logger;
    const { serverId, api, journal, clock, logger, scrub, history } = options;
    const health = new ApiHealth(logger);
    this.#apiHealth = health;
    this.#reporter = new Reporter({ serverId, api, journal, clock, logger, health, ...(scrub && { scrub }), ...(history && { history }) });
  }

  /** A player joined: their online-only commands just became runnable, so pull now. */
  wake(): void {
    this.#wake.wake();
  }

  health(): LoopHealth {
    return {
      lastApiSuccessAt: this.#apiHealth.lastSuccessAt,
      lastApiError: this.#apiHealth.lastError,
      lastDeliveryAt: this.#lastDeliveryAt,
      inHand: this.#inHand,
    };
  }

  /** Resolves when stopped; rejects with a PorterError whose exitCode is 78 on a credentials error. */
  async run(signals: StopSignals): Promise<void> {
    // One listener for the loop's whole life: a composite signal per idle pull would be kept alive
    // by the long-lived stop signal (nodejs/node#55351), a slow leak in a daemon that idles for days.
    const wakeOnStop = () => this.#wake.wake();
    signals.stop.addEventListener('abort', wakeOnStop, { once: true });
    try {
      await this.settleJournal(signals.hard);
      await this.#pullUntilStopped(signals);
    } finally {
      signals.stop.removeEventListener('abort', wakeOnStop);
    }
  }

  async #pullUntilStopped(signals: StopSignals): Promise<void> {
    let failures = 0;
    while (!signals.stop.aborted) {
      try {
        // Each wait is entered only when it would wait: an idle fleet passes here a thousand times
        // a second, and an await of a settled promise is a promise and a turn of the microtask queue.
        const { journal, executor, gate } = this.#o;
        if (!journal.writable) await this.#waitForWritableJournal(signals.stop);
        if (!executor.isReady()) await executor.waitReady(signals.stop);
        if (gate !== undefined && !gate.isOpen()) await gate.waitOpen(signals.stop);
        if (this.#o.pullDelay() > 0) await this.#waitForPullBudget(signals.stop);
        const online = await this.#o.players.get(signals.stop);
        if (signals.stop.aborted) break;
        // The pull itself is not aborted by stop: a command it claims is run (graceful stop). Whether
        // to claim is decided again once it waited for the budget and a connection, as it is sent.
        const result = await this.#o.api.pull(online, signals.hard, () => this.#assertMayClaim(signals.stop));
        this.#apiHealth.succeeded(this.#o.clock.now());
        failures = 0;
        await this.#handlePull(result, signals);
      } catch (error) {
        if (signals.stop.aborted && isAbort(error)) break;
        // A gate shut during a wait: the top of the loop waits for it again.
        if (error instanceof ClaimWithheldError) {
          this.#log.debug({ event: 'pull.withheld' }, error.message);
          continue;
        }
        if (isConfigurationError(error)) throw error;
        // The game server went away while its players were read: wait for it, not for the API.
        if (error instanceof NotSentError) {
          await this.#o.clock.sleep(GAME_SERVER_RECHECK_MS, signals.stop).catch(() => undefined);
          continue;
        }
        const wait = this.#apiHealth.pauseAfter(error, failures++);
        if (!(error instanceof RateLimitedError) && !(error instanceof PlanRequiredError)) {
          this.#log.warn({ event: 'pull.failed', err: messageOf(error), retryInMs: wait }, 'pull failed; backing off');
        }
        await this.#o.clock.sleep(wait, signals.stop).catch(() => undefined);
      }
    }
  }

  /**
   * The decision to claim, taken as the pull is sent (docs/design.md#lifecycle): everything the
   * loop waited for before the pull may have changed while it waited for the budget, the player
   * list and a connection. Throws ClaimWithheldError when it no longer holds.
   */
  #assertMayClaim(stop: AbortSignal): void {
    const { executor, gate, journal } = this.#o;
    let why: string | undefined;
    if (stop.aborted) why = 'stopping';
    else if (!executor.isReady()) why = 'the game server is not connected';
    else if (gate && !gate.isOpen()) why = gate.heldBecause?.() ?? 'a claim gate is shut';
    else if (!journal.writable) why = 'the journal cannot be written';
    if (why !== undefined) throw new ClaimWithheldError(`pull withheld before it was sent: ${why}`);
  }

  /** Reports what a previous run left in the journal before anything new is claimed. */
  settleJournal(hard: AbortSignal): Promise<void> {
    return this.#reporter.settleLeftovers(hard);
  }

  /**
   * While the journal cannot be written, nothing new is claimed: a claim porter cannot make
   * durable could be run twice after a crash. Tries again with backoff until a write succeeds.
   */
  async #waitForWritableJournal(stop: AbortSignal): Promise<void> {
    const { journal, clock } = this.#o;
    if (journal.writable) return;
    this.#log.error(
      { event: 'journal.unwritable', err: journal.lastWriteError?.message },
      'the delivery journal cannot be written: claiming nothing until it can (check free space and permissions of the state directory)',
    );
    for (let attempt = 1; !journal.tryRecover(); attempt++) {
      await clock.sleep(backoffDelay(attempt, JOURNAL_RETRY), stop);
    }
    this.#log.info({ event: 'journal.writable' }, 'the delivery journal is writable again: deliveries resume');
  }

  async #handlePull(result: PullResult, signals: StopSignals): Promise<void> {
    switch (result.kind) {
      case 'claimed':
        await this.#deliver(result.id, result.command, signals);
        return; // pull again at once: more may be due
      case 'oversized':
        await this.#deliver(result.id, undefined, signals, result.reason);
        return;
      case 'unusable':
        this.#log.error(
          { event: 'pull.unusable', reason: result.reason },
          'pull answer unusable: the API answered with a claim porter cannot use or report (a command may stay PROCESSING on the platform); nothing was run, pulling again shortly',
        );
        await this.#o.clock.sleep(UNUSABLE_CLAIM_PAUSE_MS, signals.stop).catch(() => undefined);
        return;
      case 'empty':
        this.#reporter.flushJournal(); // idle: a good moment to write settled removals
        await this.#wake.sleepUnlessWoken(this.#o.clock, this.#o.idleDelay());
    }
  }

  /** `notRunnable`: why a claim porter could not read in full is failed without running. */
  async #deliver(id: string, command: unknown, signals: StopSignals, notRunnable?: string): Promise<void> {
    const { journal, clock, serverId } = this.#o;
    const started = clock.now();
    const known = journal.recall(serverId, id, started);
    if (known) {
      await this.#reportAgain(
        id,
        known.kind === 'settled' ? known.settled.outcome : (known.entry.outcome ?? unknownAfterRestart(known.entry)),
        signals.hard,
      );
      return;
    }
    this.#inHand = id;
    let journaled = true;
    try {
      // The claim is written first, before any other work: it closes the claim gap as far as porter can.
      await journal.claim(serverId, id, typeof command === 'string' ? command : undefined, started, this.#o.store);
    } catch (error) {
      if (!(error instanceof JournalWriteError)) throw error;
      journaled = false;
      this.#log.error(
        { event: 'journal.claim.failed', id, err: error.message },
        'could not journal the claim: the command is not run, and is reported failed',
      );
    }
    let fatal: PorterError | undefined;
    let decision: Decision | typeof ABANDONED;
    try {
      if (!journaled) decision = failedAs('not-run', NOT_JOURNALED);
      else if (notRunnable !== undefined) decision = failedAs('not-run', notRunnable);
      else decision = await this.#run(id, command, signals.hard);
    } catch (error) {
      if (!isConfigurationError(error)) throw error;
      fatal = error as PorterError;
      decision = failedAs('not-sent', `not sent: ${fatal.message}`);
    }
    if (decision === ABANDONED) {
      // The drain bound ran out mid-command: leave the claim unknown; the next start settles it.
      this.#inHand = undefined;
      return;
    }
    const outcome = this.#reporter.scrubbed(decision.outcome);
    // A journal that cannot take the outcome does not hold the report back: the API's acceptance is the durable record.
    if (journaled) await this.#reporter.recordOutcome(id, outcome);
    const ms = clock.now() - started;
    this.#o.history?.record({
      serverId,
      id,
      command: typeof command === 'string' ? command : undefined,
      outcome,
      failure: decision.failure,
      answer: decision.answer,
      ms,
      at: clock.now(),
    });
    await this.#reporter.report(id, outcome, signals.hard, {
      command: typeof command === 'string' ? command : undefined,
      failure: decision.failure,
    });
    this.#inHand = undefined;
    this.#lastDeliveryAt = clock.now();
    this.#o.observer?.onDelivery?.({ serverId, id, result: outcome.result, ms });
    const line = { id, outcome: outcome.result, ms, command: typeof command === 'string' ? command : undefined };
    if (outcome.result === 'done') this.#log.info({ event: 'delivery.done', ...line }, 'delivered');
    else this.#log.warn({ event: 'delivery.failed', ...line, reason: outcome.reason }, 'delivery failed');
    if (fatal) throw fatal;
  }

  /** The API handed out an id porter already holds or settled: never run it again, report what it knows. */
  async #reportAgain(id: string, outcome: Outcome, hard: AbortSignal): Promise<void> {
    this.#log.warn(
      { event: 'delivery.repeat', id, outcome: outcome.result },
      'the API handed out a command porter already ran or settled: not running it again; reporting its outcome again',
    );
    await this.#reporter.report(id, this.#reporter.scrubbed(outcome), hard);
  }

  /** Decides the outcome of one claimed command. Never runs a command twice. */
  async #run(id: string, command: unknown, hard: AbortSignal): Promise<Decision | typeof ABANDONED> {
    if (typeof command !== 'string') {
      return failedAs(
        'not-run',
        `the API's claim has no command text (got ${command === null ? 'null' : typeof command}); nothing was run`,
      );
    }
    if (command.trim() === '') return failedAs('not-run', "the API's claim has an empty command; nothing was sent to the game server");
    try {
      assertSingleLine(command);
    } catch (error) {
      return failedAs('refused', messageOf(error));
    }
    const verdict = this.#o.policy.check(command);
    if (!verdict.ok) return failedAs('refused', `refused, not sent: ${verdict.reason}`);

    const { executor, clock } = this.#o;
    const giveUpAt = clock.now() + this.#o.notSentRetryMs;
    for (let attempt = 0; ; attempt++) {
      try {
        const answer = await executor.execute(command, { id, serverId: this.#o.serverId }, hard);
        // Scrubbed before failureIn cuts it to an excerpt: cut first, a long secret the game echoes
        // would be left half, and the half no longer matches the secret.
        const failure = this.#o.failureIn(this.#o.scrub === undefined ? answer : this.#o.scrub(answer));
        return failure === null ? { outcome: { result: 'done' }, answer } : failedAs('game-answer', `the game answered: ${failure}`);
      } catch (error) {
        if (error instanceof NotSentError) {
          const notSent = () =>
            failedAs('not-sent', `not sent: could not be sent for ${this.#o.notSentRetryMs} ms (notSentRetryMs): ${error.message}`);
          const left = giveUpAt - clock.now();
          if (left <= 0 || hard.aborted) return notSent();
          this.#log.warn(
            { event: 'delivery.waiting', id, attempt, err: error.message },
            'command not sent yet: waiting for the game server',
          );
          await this.#waitReadyWithin(left, hard);
          if (!executor.isReady()) return notSent();
          continue;
        }
        if (error instanceof OutcomeUnknownError) {
          return failedAs(
            'unknown',
            `outcome unknown: ${error.message}; not resent, so it cannot run twice — retry it from the dashboard if it did not arrive`,
          );
        }
        if (error instanceof CommandRefusedError) return failedAs('refused', `refused, not sent: ${error.message}`);
        if (error instanceof CommandFailedError) return failedAs('command-failed', error.message);
        if (isAbort(error) && hard.aborted) return ABANDONED;
        if (isConfigurationError(error)) throw error;
        return failedAs('unknown', `outcome unknown: ${messageOf(error)}`);
      }
    }
  }

  /** Waits for the executor up to `ms` on the injected clock, or until `hard` aborts. */
  async #waitReadyWithin(ms: number, hard: AbortSignal): Promise<void> {
    const bounded = withDeadline(this.#o.clock, Math.max(1, ms), hard, () => new DOMException('waited long enough', 'TimeoutError'));
    try {
      await this.#o.executor.waitReady(bounded.signal);
    } catch (error) {
      if (isConfigurationError(error)) throw error;
    } finally {
      bounded.release();
    }
  }

  async #waitForPullBudget(stop: AbortSignal): Promise<void> {
    let delay = this.#o.pullDelay();
    if (delay > 0) this.#log.debug({ event: 'pull.budget.wait', waitMs: delay }, 'the next pull waits for its budget');
    for (; delay > 0; delay = this.#o.pullDelay()) await this.#o.clock.sleep(delay, stop);
  }
}

/** A pull not sent, because porter may not claim right now; nothing happened on the platform. */
class ClaimWithheldError extends Error {
  override readonly name = 'ClaimWithheldError';
}

const NOT_JOURNALED =
  'not run: porter could not record the claim in its journal (state directory full or not writable), so it did not send the command to the game server; it claims nothing more until the journal can be written — retry it from the dashboard';

/** The drain bound ran out while the command was running: no outcome is known or recorded. */
const ABANDONED = Symbol('abandoned at the drain bound');

function failed(reason: string): Outcome {
  return { result: 'failed', reason };
}

/** What #run decided: the outcome reported, and what the history shows of it. */
interface Decision {
  readonly outcome: Outcome;
  readonly failure?: FailureKind;
  /** The game's answer of a command that ran. */
  readonly answer?: string;
}

function failedAs(failure: FailureKind, reason: string): Decision {
  return { outcome: failed(reason), failure };
}

function isAbort(error: unknown): boolean {
  return (error as Error)?.name === 'AbortError' || (error as Error)?.name === 'TimeoutError';
}
