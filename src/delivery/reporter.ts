import type { Logger } from 'pino';
import { ApiHealth } from '../api/answers/api-health.js';
import { ReportRefusedError } from '../api/errors.js';
import type { ServerApi } from '../api/types.js';
import type { Clock } from '../clock.js';
import { isConfigurationError, messageOf } from '../errors.js';
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
  /** The API's health as this server's calls find it, shared with its pulls; one of its own without. */
  readonly health?: ApiHealth;
}

/** What the history shows of a command whose report the API refused for good, where porter knows it. */
interface ReportedCommand {
  readonly command?: string | undefined;
  readonly failure?: FailureKind | undefined;
}

export class Reporter {
  readonly #o: ReporterOptions;
  readonly #health: ApiHealth;

  constructor(options: ReporterOptions) {
    this.#o = options;
    this.#health = options.health ?? new ApiHealth(options.logger);
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
        this.#health.succeeded(clock.now());
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
        const wait = this.#health.pauseAfter(error, attempt);
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
    this.#health.failed(error);
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
