import type { Logger } from 'pino';
import { PlanRequiredError, RateLimitedError, ReportRefusedError } from '../api/errors.js';
import type { ServerApi } from '../api/types.js';
import type { Clock } from '../clock.js';
import { isConfigurationError, messageOf } from '../errors.js';
import { backoffDelay, type BackoffPolicy } from '../net/backoff.js';
import type { FailureKind, SettledDelivery } from './history/history-record.js';
import { JournalWriteError, type Journal, type JournalEntry, type Outcome } from './journal/journal.js';

/**
 * How one server's outcomes reach the Seller API (docs/design.md#nothing-lost): each report is
 * retried with backoff until the API accepts it (404/409: the platform already settled it), one it
 * refuses for good is recorded and given up, and what a previous run left in the journal is
 * reported before anything new is claimed. The delivery loop reports through it, and so does the
 * settling of a server no longer configured (src/daemon/leftovers.ts), whose journal still holds
 * what it claimed.
 */

const PLAN_RETRY_MS = 60_000;
/** API trouble (5xx, timeouts, resets) and reports not yet accepted: 0.5 s doubling up to 30 s. */
const API_BACKOFF: BackoffPolicy = { initialMs: 500, maxMs: 30_000 };

interface ReporterOptions {
  readonly serverId: string;
  /** Only its report routes are used. */
  readonly api: Pick<ServerApi, 'done' | 'fail'>;
  readonly journal: Journal;
  readonly clock: Clock;
  /** Already names the server. */
  readonly logger: Logger;
  /** Removes every secret porter holds from a text: each failure reason passes through it. */
  readonly scrub?: (text: string) => string;
  readonly history?: { record(delivery: SettledDelivery): void };
}

/** What the history shows of a command whose report the API refused for good, where porter knows it. */
interface ReportedCommand {
  readonly command?: string | undefined;
  readonly failure?: FailureKind | undefined;
}

/** The API's last answers, for /healthz: when a call last succeeded, and why the last one failed. */
class ApiHealth {
  lastSuccessAt: number | undefined;
  lastError: string | undefined;

  succeeded(now: number): void {
    this.lastSuccessAt = now;
    this.lastError = undefined;
  }

  /** What /healthz shows of an API failure: porter's own message without the API's free-text `detail`, which it does not control. */
  failed(error: unknown): void {
    const message = messageOf(error);
    const detail = (error as { detail?: unknown }).detail;
    this.lastError = typeof detail === 'string' && detail.length > 0 ? message.split(detail).join('(detail omitted)') : message;
  }
}

export class Reporter {
  readonly #o: ReporterOptions;
  readonly health: ApiHealth;

  constructor(options: ReporterOptions, health: ApiHealth = new ApiHealth()) {
    this.#o = options;
    this.health = health;
  }

  /**
   * Reports what the journal holds for this server (a previous run's, or a removed server's; `entries`
   * when only some are this reporter's) until each is accepted or `hard` aborts.
   */
  async settleLeftovers(hard: AbortSignal, entries: readonly JournalEntry[] = this.#o.journal.pending(this.#o.serverId)): Promise<void> {
    const { journal, serverId, clock, history } = this.#o;
    for (const listed of entries) {
      if (hard.aborted) break;
      // Settled meanwhile: nothing more to do; otherwise what the journal holds now.
      const known = journal.recall(serverId, listed.id, clock.now());
      if (known?.kind !== 'pending') continue;
      const { entry } = known;
      const outcome = this.scrubbed(entry.outcome ?? unknownAfterRestart(entry));
      if (!entry.outcome) {
        await this.recordOutcome(entry.id, outcome);
        // An outcome the previous run decided is in the history already; this one was never decided.
        history?.record({ serverId, id: entry.id, command: entry.command, outcome, failure: 'unknown', ms: undefined, at: clock.now() });
      }
      this.#o.logger.warn(
        { event: 'report.leftover', id: entry.id, outcome: outcome.result },
        'reporting a command left unreported (by a previous run, or by a server since removed)',
      );
      await this.report(entry.id, outcome, hard, { command: entry.command, failure: entry.outcome ? undefined : 'unknown' });
    }
    this.flushJournal();
  }

  /**
   * Retried until the API accepts it; a 404/409 means the platform already settled it. A report the
   * API refuses for good is recorded, given up and settled in the journal: retried, it would hold up
   * every later command of the server, and at the next start the same answer would come back.
   * Resolves once settled, or when `hard` aborts (the report stays journaled).
   */
  async report(id: string, outcome: Outcome, hard: AbortSignal, about: ReportedCommand = {}): Promise<void> {
    const { api, journal, serverId, clock, logger } = this.#o;
    for (let attempt = 0; !hard.aborted; attempt++) {
      try {
        const answer = outcome.result === 'done' ? await api.done(id, hard) : await api.fail(id, outcome.reason, hard);
        this.health.succeeded(clock.now());
        // At info (docs/design.md#the-api-contract): a repeat after a crash or a lost answer meets a 409 by design.
        if (answer !== 'accepted') {
          logger.info(
            { event: 'report.settled', id, outcome: outcome.result, status: answer.status, apiCode: loggableCode(answer.apiCode) },
            `the API answered the report ${answer.status}: the platform already settled this command (or no longer has it); moving on`,
          );
        }
        journal.settle(serverId, id, clock.now());
        return;
      } catch (error) {
        if (hard.aborted) break;
        if (isConfigurationError(error)) throw error;
        if (error instanceof ReportRefusedError) {
          this.#giveUp(id, outcome, about, error);
          return;
        }
        const wait = this.pauseAfter(error, attempt);
        logger.warn(
          { event: 'report.retry', id, attempt, retryInMs: wait, err: messageOf(error) },
          'report not accepted yet; it stays in the journal and is retried',
        );
        await clock.sleep(wait, hard).catch(() => undefined);
      }
    }
    logger.warn(
      { event: 'report.pending', id },
      'stopped before the report was accepted: it stays in the journal and is reported on the next start',
    );
  }

  /** How long to pause after a failed API call (a pull's too), noting it for /healthz. */
  pauseAfter(error: unknown, attempt: number): number {
    this.health.failed(error);
    // The budget already knows the Retry-After (at least its floor) and holds the next call.
    if (error instanceof RateLimitedError) return 0;
    if (error instanceof PlanRequiredError) {
      this.#o.logger.error(
        { event: 'api.plan.missing', err: messageOf(error) },
        `the store's plan does not include API access (402): retrying every ${PLAN_RETRY_MS / 1000} s`,
      );
      return PLAN_RETRY_MS;
    }
    return backoffDelay(attempt + 1, API_BACKOFF);
  }

  /** The outcome made durable before it is reported; a failed write is logged and reported all the same. */
  async recordOutcome(id: string, outcome: Outcome): Promise<void> {
    try {
      await this.#o.journal.recordOutcome(this.#o.serverId, id, outcome, this.#o.clock.now());
    } catch (error) {
      if (!(error instanceof JournalWriteError)) throw error;
      this.#o.logger.error(
        { event: 'journal.outcome.failed', id, err: error.message },
        'could not journal the outcome: reporting it all the same',
      );
    }
  }

  flushJournal(): void {
    try {
      this.#o.journal.flush();
    } catch (error) {
      if (!(error instanceof JournalWriteError)) throw error;
      // Only settled removals were to be written: at worst they are reported again after a crash.
    }
  }

  scrubbed(outcome: Outcome): Outcome {
    const { scrub } = this.#o;
    return outcome.result === 'failed' && scrub ? { result: 'failed', reason: scrub(outcome.reason) } : outcome;
  }

  /** The API's answer in the history and the log: its status and code only, never its free-text detail. */
  #giveUp(id: string, outcome: Outcome, about: ReportedCommand, error: ReportRefusedError): void {
    const { serverId, clock, journal, history, logger } = this.#o;
    const code = loggableCode(error.apiCode);
    const answer = code === undefined ? String(error.status) : `${error.status} ${code}`;
    this.health.failed(error);
    logger.error(
      { event: 'report.refused', id, outcome: outcome.result, status: error.status, apiCode: code },
      `the API refused this report for good (${answer}): given up and recorded in the delivery history; settle the command in the store dashboard. Deliveries go on`,
    );
    history?.record({
      serverId,
      id,
      command: about.command,
      outcome,
      ...(about.failure === undefined ? {} : { failure: about.failure }),
      ms: undefined,
      at: clock.now(),
      reportRefused: answer,
    });
    journal.settle(serverId, id, clock.now());
  }
}

/** The API's problem code where it looks like one; free text the API put there is left out of logs and the history. */
function loggableCode(apiCode: string | undefined): string | undefined {
  return apiCode !== undefined && /^[A-Za-z0-9_.:-]{1,100}$/.test(apiCode) ? apiCode : undefined;
}

export function unknownAfterRestart(entry: JournalEntry): Outcome {
  return {
    result: 'failed',
    reason: `outcome unknown: porter stopped after claiming this command at ${new Date(entry.claimedAt).toISOString()} and before recording its result; it was not run again — retry it from the dashboard if it did not arrive`,
  };
}
