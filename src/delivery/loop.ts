import type { Logger } from 'pino';
import { PlanRequiredError, RateLimitedError, ReportRefusedError } from '../api/errors.js';
import type { PullResult, ServerApi } from '../api/types.js';
import type { Clock } from '../clock.js';
import {
  CommandFailedError,
  CommandRefusedError,
  isConfigurationError,
  NotSentError,
  OutcomeUnknownError,
  type PorterError,
} from '../errors.js';
import { assertSingleLine, type Executor } from '../protocols/executor.js';
import { backoffDelay, type BackoffPolicy } from '../net/backoff.js';
import { JournalWriteError, type Journal, type JournalEntry, type Outcome } from './journal/journal.js';
import type { FailureKind, SettledDelivery } from './history/history-record.js';
import { WakeSignal } from '../wake-signal.js';
import { withDeadline } from '../abort.js';

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
  readonly api: ServerApi;
  readonly executor: Executor;
  readonly players: { get(signal?: AbortSignal): Promise<string[]> };
  readonly journal: Journal;
  readonly policy: CommandPolicyCheck;
  /** Returns the failure reason when the game's answer means the command failed. */
  readonly failureIn: (answer: string) => string | null;
  /**
   * Holds the next pull until claims are allowed (an Agones GameServer not Ready yet); the pull
   * in flight and the command in hand are never interrupted by it.
   */
  readonly gate?: { waitOpen(signal: AbortSignal): Promise<void> };
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

const PLAN_RETRY_MS = 60_000;
/** API trouble (5xx, timeouts, resets) and reports not yet accepted: 0.5 s doubling up to 30 s. */
const API_BACKOFF: BackoffPolicy = { initialMs: 500, maxMs: 30_000 };
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
      lastApiSuccessAt: this.#lastApiSuccessAt,
      lastApiError: this.#lastApiError,
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
        await this.#waitForWritableJournal(signals.stop);
        await this.#o.executor.waitReady(signals.stop);
        await this.#o.gate?.waitOpen(signals.stop);
        await this.#waitForPullBudget(signals.stop);
        const online = await this.#o.players.get(signals.stop);
        if (signals.stop.aborted) break;
        // The pull itself is not aborted by stop: a command it claims is run (graceful stop).
        const result = await this.#o.api.pull(online, signals.hard);
        this.#apiSucceeded();
        failures = 0;
        await this.#handlePull(result, signals);
      } catch (error) {
        if (signals.stop.aborted && isAbort(error)) break;
        if (isConfigurationError(error)) throw error;
        // The game server went away while its players were read: wait for it, not for the API.
        if (error instanceof NotSentError) {
          await this.#o.clock.sleep(GAME_SERVER_RECHECK_MS, signals.stop).catch(() => undefined);
          continue;
        }
        const wait = this.#pauseAfter(error, failures++, 'pull');
        await this.#o.clock.sleep(wait, signals.stop).catch(() => undefined);
      }
    }
  }

  /** Reports what a previous run left in the journal before anything new is claimed. */
  async settleJournal(hard: AbortSignal): Promise<void> {
    for (const entry of this.#o.journal.pending(this.#o.serverId)) {
      const outcome = this.#scrubbed(entry.outcome ?? unknownAfterRestart(entry));
      if (!entry.outcome) {
        await this.#recordOutcome(entry.id, outcome);
        // An outcome the previous run decided is in the history already; this one was never decided.
        this.#o.history?.record({
          serverId: this.#o.serverId,
          id: entry.id,
          command: entry.command,
          outcome,
          failure: 'unknown',
          ms: undefined,
          at: this.#o.clock.now(),
        });
      }
      this.#log.warn({ id: entry.id, outcome: outcome.result }, 'reporting a command left over from the previous run');
      await this.#report(entry.id, outcome, hard, { command: entry.command, failure: entry.outcome ? undefined : 'unknown' });
    }
    this.#flushJournal();
  }

  /**
   * While the journal cannot be written, nothing new is claimed: a claim porter cannot make
   * durable could be run twice after a crash. Tries again with backoff until a write succeeds.
   */
  async #waitForWritableJournal(stop: AbortSignal): Promise<void> {
    const { journal, clock } = this.#o;
    if (journal.writable) return;
    this.#log.error(
      { err: journal.lastWriteError?.message },
      'the delivery journal cannot be written: claiming nothing until it can (check free space and permissions of the state directory)',
    );
    for (let attempt = 1; !journal.tryRecover(); attempt++) {
      await clock.sleep(backoffDelay(attempt, JOURNAL_RETRY), stop);
    }
    this.#log.info('the delivery journal is writable again: deliveries resume');
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
        this.#log.error({ reason: result.reason }, 'the API answered a pull with a claim porter cannot use or report');
        await this.#o.clock.sleep(UNUSABLE_CLAIM_PAUSE_MS, signals.stop).catch(() => undefined);
        return;
      case 'empty':
        this.#flushJournal(); // idle: a good moment to write settled removals
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
      await journal.claim(serverId, id, typeof command === 'string' ? command : undefined, started);
    } catch (error) {
      if (!(error instanceof JournalWriteError)) throw error;
      journaled = false;
      this.#log.error({ id, err: error.message }, 'could not journal the claim: the command is not run, and is reported failed');
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
    const outcome = this.#scrubbed(decision.outcome);
    // A journal that cannot take the outcome does not hold the report back: the API's acceptance is the durable record.
    if (journaled) await this.#recordOutcome(id, outcome);
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
    await this.#report(id, outcome, signals.hard, {
      command: typeof command === 'string' ? command : undefined,
      failure: decision.failure,
    });
    this.#inHand = undefined;
    this.#lastDeliveryAt = clock.now();
    this.#o.observer?.onDelivery?.({ serverId, id, result: outcome.result, ms });
    const line = { id, outcome: outcome.result, ms, command: typeof command === 'string' ? command : undefined };
    if (outcome.result === 'done') this.#log.info(line, 'delivered');
    else this.#log.warn({ ...line, reason: outcome.reason }, 'delivery failed');
    if (fatal) throw fatal;
  }

  /** The API handed out an id porter already holds or settled: never run it again, report what it knows. */
  async #reportAgain(id: string, outcome: Outcome, hard: AbortSignal): Promise<void> {
    this.#log.warn(
      { id, outcome: outcome.result },
      'the API handed out a command porter already ran or settled: not running it again; reporting its outcome again',
    );
    await this.#report(id, this.#scrubbed(outcome), hard);
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
      return failedAs('refused', (error as Error).message);
    }
    const verdict = this.#o.policy.check(command);
    if (!verdict.ok) return failedAs('refused', `refused, not sent: ${verdict.reason}`);

    const { executor, clock } = this.#o;
    const giveUpAt = clock.now() + this.#o.notSentRetryMs;
    for (let attempt = 0; ; attempt++) {
      try {
        const answer = await executor.execute(command, { id, serverId: this.#o.serverId }, hard);
        const failure = this.#o.failureIn(answer);
        return failure === null ? { outcome: { result: 'done' }, answer } : failedAs('game-answer', `the game answered: ${failure}`);
      } catch (error) {
        if (error instanceof NotSentError) {
          const notSent = () =>
            failedAs('not-sent', `not sent: could not be sent for ${this.#o.notSentRetryMs} ms (notSentRetryMs): ${error.message}`);
          const left = giveUpAt - clock.now();
          if (left <= 0 || hard.aborted) return notSent();
          this.#log.warn({ id, attempt, err: error.message }, 'command not sent yet: waiting for the game server');
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
        return failedAs('unknown', `outcome unknown: ${(error as Error).message ?? String(error)}`);
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

  /**
   * Retried until the API accepts it; a 404/409 means the platform already settled it. A report the
   * API refuses for good is recorded, given up and settled in the journal: retried, it would hold up
   * every later command of the server, and at the next start the same answer would come back.
   */
  async #report(id: string, outcome: Outcome, hard: AbortSignal, about: ReportedCommand = {}): Promise<void> {
    const { api, journal, serverId, clock } = this.#o;
    for (let attempt = 0; !hard.aborted; attempt++) {
      try {
        const answer = outcome.result === 'done' ? await api.done(id, hard) : await api.fail(id, outcome.reason, hard);
        this.#apiSucceeded();
        if (answer === 'alreadySettled') {
          this.#log.warn({ id }, 'the API says this command was already settled (404/409); moving on');
        }
        journal.settle(serverId, id, clock.now());
        return;
      } catch (error) {
        if (hard.aborted) break;
        if (isConfigurationError(error)) throw error;
        if (error instanceof ReportRefusedError) {
          this.#giveUpReport(id, outcome, about, error);
          return;
        }
        const wait = this.#pauseAfter(error, attempt, 'report');
        this.#log.warn(
          { id, attempt, retryInMs: wait, err: (error as Error)?.message ?? String(error) },
          'report not accepted yet; it stays in the journal and is retried',
        );
        await clock.sleep(wait, hard).catch(() => undefined);
      }
    }
    this.#log.warn({ id }, 'stopped before the report was accepted: it stays in the journal and is reported on the next start');
  }

  /** The API's answer in the history and the log: its status and code only, never its free-text detail. */
  #giveUpReport(id: string, outcome: Outcome, about: ReportedCommand, error: ReportRefusedError): void {
    const { serverId, clock } = this.#o;
    const code = error.apiCode !== undefined && /^[A-Za-z0-9_.:-]{1,100}$/.test(error.apiCode) ? error.apiCode : undefined;
    const answer = code === undefined ? String(error.status) : `${error.status} ${code}`;
    this.#lastApiError = healthText(error);
    this.#log.error(
      { id, outcome: outcome.result, status: error.status, apiCode: code },
      `the API refused this report for good (${answer}): given up and recorded in the delivery history; settle the command in the store dashboard. Deliveries go on`,
    );
    this.#o.history?.record({
      serverId,
      id,
      command: about.command,
      outcome,
      ...(about.failure === undefined ? {} : { failure: about.failure }),
      ms: undefined,
      at: clock.now(),
      reportRefused: answer,
    });
    this.#o.journal.settle(serverId, id, clock.now());
  }

  /** A failed write is logged and shows in /healthz; the next pull waits until the journal is writable. */
  async #recordOutcome(id: string, outcome: Outcome): Promise<void> {
    try {
      await this.#o.journal.recordOutcome(this.#o.serverId, id, outcome, this.#o.clock.now());
    } catch (error) {
      if (!(error instanceof JournalWriteError)) throw error;
      this.#log.error({ id, err: error.message }, 'could not journal the outcome: reporting it all the same');
    }
  }

  #flushJournal(): void {
    try {
      this.#o.journal.flush();
    } catch (error) {
      if (!(error instanceof JournalWriteError)) throw error;
      // Only settled removals were to be written: at worst they are reported again after a crash.
    }
  }

  #scrubbed(outcome: Outcome): Outcome {
    const { scrub } = this.#o;
    return outcome.result === 'failed' && scrub ? failed(scrub(outcome.reason)) : outcome;
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

  /** How long to pause after a failed API call, logging what happened. */
  #pauseAfter(error: unknown, attempt: number, call: 'pull' | 'report'): number {
    this.#lastApiError = healthText(error);
    // The budget already knows the Retry-After (at least its floor) and holds the next call.
    if (error instanceof RateLimitedError) return 0;
    const message = (error as Error)?.message ?? String(error);
    if (error instanceof PlanRequiredError) {
      this.#log.error({ err: message }, `the store's plan does not include API access (402): retrying every ${PLAN_RETRY_MS / 1000} s`);
      return PLAN_RETRY_MS;
    }
    const wait = backoffDelay(attempt + 1, API_BACKOFF);
    if (call === 'pull') this.#log.warn({ err: message, retryInMs: wait }, 'pull failed; backing off');
    return wait;
  }
}

const NOT_JOURNALED =
  'not run: porter could not record the claim in its journal (state directory full or not writable), so it did not send the command to the game server; it claims nothing more until the journal can be written — retry it from the dashboard';

/**
 * What /healthz shows of an API failure: porter's own message without the API's free-text
 * `detail`, which porter does not control and which an endpoint scraped widely should not echo.
 */
function healthText(error: unknown): string {
  const message = (error as Error)?.message ?? String(error);
  const detail = (error as { detail?: unknown }).detail;
  return typeof detail === 'string' && detail.length > 0 ? message.split(detail).join('(detail omitted)') : message;
}

/** The drain bound ran out while the command was running: no outcome is known or recorded. */
const ABANDONED = Symbol('abandoned at the drain bound');

function failed(reason: string): Outcome {
  return { result: 'failed', reason };
}

/** What the history shows of a command whose report the API refused for good, where porter knows it. */
interface ReportedCommand {
  readonly command?: string | undefined;
  readonly failure?: FailureKind | undefined;
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

function unknownAfterRestart(entry: JournalEntry): Outcome {
  return failed(
    `outcome unknown: porter stopped after claiming this command at ${new Date(entry.claimedAt).toISOString()} and before recording its result; it was not run again — retry it from the dashboard if it did not arrive`,
  );
}

function isAbort(error: unknown): boolean {
  return (error as Error)?.name === 'AbortError' || (error as Error)?.name === 'TimeoutError';
}
