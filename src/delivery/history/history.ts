import { join } from 'node:path';
import type { Logger } from 'pino';
import { startDeadline, type Clock } from '../../clock.js';
import { backoffDelay, type BackoffPolicy } from '../../net/backoff.js';
import {
  HISTORY_FILE,
  nodeHistoryWriteFs,
  PREVIOUS_HISTORY_FILE,
  readHistory,
  type HistoryAppendFile,
  type HistoryWriteFs,
} from './history-file.js';
import { encodeHistoryRecord, type HistoryRecord, type SettledDelivery } from './history-record.js';
import { StateFileError } from '../state/state-file.js';
import { messageOf } from '../../errors.js';

/**
 * The delivery history (docs/operations.md#what-happened-to-a-purchase): one JSON line per
 * command whose outcome porter decided, appended to `history.jsonl` in stateDir, for
 * `porter history` and /history.
 *
 * It is a record for people, not part of the delivery promise (the journal is that), so it stays
 * off the hot path: `record()` only queues the line and returns, and the lines are written in
 * the background with asynchronous file operations. A disk that is slow or refuses the writes
 * (full, read-only) never holds a delivery back: the lines wait in memory, bounded (the oldest are
 * dropped, counted in the log), and go to the disk when it takes them again. One error line per
 * episode of failing writes, one line when it ends.
 */

interface DeliveryHistoryOptions {
  readonly stateDir: string;
  /** history.maxBytes: the bound of each of the two files. */
  readonly maxBytes: number;
  /** Removes every secret porter holds from a text: command, answer and reason all pass through it. */
  readonly scrub: (text: string) => string;
  readonly clock: Clock;
  readonly logger: Logger;
  /** For tests that make the disk fail or stall. */
  readonly files?: HistoryWriteFs;
  /** Bytes of lines held while the disk does not take them; beyond, the oldest are dropped. */
  readonly maxQueuedBytes?: number;
}

/** About 3,000 typical records: minutes of a busy store's deliveries while a disk is away. */
const MAX_QUEUED_BYTES = 1024 * 1024;
const RETRY: BackoffPolicy = { initialMs: 1_000, maxMs: 30_000 };
/** How long stopping waits for the last lines to reach the disk. */
const CLOSE_WAIT_MS = 2_000;

export class DeliveryHistory {
  readonly #o: DeliveryHistoryOptions;
  readonly #files: HistoryWriteFs;
  readonly #log: Logger;
  readonly #current: string;
  readonly #previous: string;
  readonly #maxQueuedBytes: number;
  #queue: string[] = [];
  #queuedBytes = 0;
  /** The current file's size as written; undefined until read from the disk (at start, after a failed write). */
  #size: number | undefined;
  /** history.jsonl, held open between writes; undefined until the next write opens it. */
  #file: HistoryAppendFile | undefined;
  /** The file ends in a partial line (a crash or a failed write): the next append starts a new line. */
  #needsNewline = false;
  #draining: Promise<void> | undefined;
  #failedWrites = 0;
  #droppedInEpisode = 0;
  #closing = false;
  readonly #stopRetrying = new AbortController();

  constructor(options: DeliveryHistoryOptions) {
    this.#o = options;
    this.#files = options.files ?? nodeHistoryWriteFs;
    this.#log = options.logger.child({ component: 'history' });
    this.#current = join(options.stateDir, HISTORY_FILE);
    this.#previous = join(options.stateDir, PREVIOUS_HISTORY_FILE);
    this.#maxQueuedBytes = options.maxQueuedBytes ?? MAX_QUEUED_BYTES;
  }

  /** Queues the delivery's record and returns at once; never throws, never waits for the disk. */
  record(delivery: SettledDelivery): void {
    if (this.#closing) return;
    let line: string;
    try {
      line = encodeHistoryRecord(delivery, this.#o.scrub);
    } catch (error) {
      // The history must never be the reason a delivery stops: lose the line, say so.
      this.#log.error(
        { event: 'history.record.failed', err: messageOf(error), id: delivery.id },
        'could not make a delivery history record; the delivery goes on',
      );
      return;
    }
    this.#queue.push(line);
    this.#queuedBytes += Buffer.byteLength(line);
    this.#dropOverflow();
    this.#draining ??= this.#drain();
  }

  /** Every record on disk, oldest first (see readHistory). */
  read(): Promise<HistoryRecord[]> {
    return readHistory(this.#o.stateDir);
  }

  /**
   * Writes what is queued, waiting at most CLOSE_WAIT_MS: a disk that hangs must not hold up
   * porter's stop. Lines still queued then are lost, and the log says how many.
   */
  async close(): Promise<void> {
    this.#closing = true;
    this.#stopRetrying.abort();
    if (this.#draining) {
      let cancel = () => {};
      const waited = new Promise<void>((resolve) => (cancel = startDeadline(this.#o.clock, CLOSE_WAIT_MS, resolve)));
      await Promise.race([this.#draining, waited]);
      cancel();
    }
    // A drain that hangs on the disk still holds the file; the process is stopping, and its exit closes it.
    if (!this.#draining) await this.#release();
    const unwritten = this.#queue.length;
    if (unwritten > 0 || this.#droppedInEpisode > 0) {
      this.#log.warn(
        { event: 'history.unwritten', unwritten, dropped: this.#droppedInEpisode },
        'porter stopped before these delivery history records reached the disk; the deliveries themselves are settled',
      );
    }
  }

  async #drain(): Promise<void> {
    try {
      while (this.#queue.length > 0) {
        if (await this.#writeSome()) continue;
        // Stopping: one last try, no waiting for a disk that keeps refusing.
        if (this.#closing) break;
        await this.#o.clock.sleep(backoffDelay(this.#failedWrites, RETRY), this.#stopRetrying.signal).catch(() => undefined);
      }
    } finally {
      // In the same turn as the empty check: a record queued after it starts a new drain.
      this.#draining = undefined;
    }
  }

  /** One append (after a rotation when the lines would take the file over its bound); false when it failed. */
  async #writeSome(): Promise<boolean> {
    let batch: string[] = [];
    try {
      if (this.#file) await this.#checkName(this.#file);
      if (this.#size === undefined) {
        const found = await this.#files.inspect(this.#current);
        this.#size = found.size;
        this.#needsNewline = !found.endsWithNewline;
      }
      if (this.#size > 0 && this.#size + this.#prefix().length + Buffer.byteLength(this.#queue[0]!) > this.#o.maxBytes) {
        await this.#files.rename(this.#current, this.#previous);
        await this.#release();
        this.#size = 0;
        this.#needsNewline = false;
      }
      this.#file ??= await this.#files.open(this.#current);
      const prefix = this.#prefix();
      batch = this.#takeBatch(this.#o.maxBytes - this.#size - prefix.length);
      const text = prefix + batch.join('');
      await this.#file.append(text);
      this.#size += Buffer.byteLength(text);
      this.#needsNewline = false;
      this.#wrote();
      return true;
    } catch (error) {
      this.#failed(error, batch);
      await this.#release();
      return false;
    }
  }

  /**
   * The file held open is still history.jsonl: an operator (or logrotate) may have deleted, moved
   * or truncated it while porter ran, and records appended to a file no name leads to would never
   * show in `porter history`. A stat per write, where reopening cost an open, a stat and a close.
   */
  async #checkName(file: HistoryAppendFile): Promise<void> {
    const named = await this.#files.identify(this.#current);
    if (named?.dev === file.dev && named.ino === file.ino) {
      // Truncated or appended to by someone else: measure again where the bound and the last line stand.
      if (named.size !== this.#size) this.#size = undefined;
      return;
    }
    await this.#release();
    this.#size = undefined;
  }

  /** Closes the file held open; a close that fails loses nothing, the next write opens it again. */
  async #release(): Promise<void> {
    const file = this.#file;
    this.#file = undefined;
    await file?.close().catch(() => undefined);
  }

  /** Ends a partial last line (left by a crash or a failed write), so the next record starts a line of its own. */
  #prefix(): string {
    return this.#needsNewline ? '\n' : '';
  }

  /** The oldest queued lines that fit in `room` bytes, and always at least one (a file holds at least one record). */
  #takeBatch(room: number): string[] {
    let bytes = Buffer.byteLength(this.#queue[0]!);
    let count = 1;
    for (; count < this.#queue.length; count++) {
      const next = Buffer.byteLength(this.#queue[count]!);
      if (bytes + next > room) break;
      bytes += next;
    }
    this.#queuedBytes -= bytes;
    return this.#queue.splice(0, count);
  }

  /** Ends an episode of failed writes or dropped records with one line saying so. */
  #wrote(): void {
    if (this.#failedWrites > 0) {
      this.#log.info(
        { event: 'history.written', failedWrites: this.#failedWrites, dropped: this.#droppedInEpisode },
        'the delivery history is written again (records dropped meanwhile are counted in "dropped")',
      );
    } else if (this.#droppedInEpisode > 0 && this.#queue.length === 0) {
      this.#log.info({ event: 'history.caughtup', dropped: this.#droppedInEpisode }, 'the delivery history has caught up with the disk');
    } else {
      return;
    }
    this.#failedWrites = 0;
    this.#droppedInEpisode = 0;
  }

  #failed(error: unknown, batch: string[]): void {
    // A failed append may have left part of its bytes: measure again, and put the lines back first in line.
    this.#size = undefined;
    this.#queue.unshift(...batch);
    this.#queuedBytes += batch.reduce((sum, line) => sum + Buffer.byteLength(line), 0);
    this.#dropOverflow();
    if (this.#failedWrites++ === 0) {
      this.#log.error(
        {
          event: 'history.write.failed',
          err: error instanceof StateFileError ? error.message : ((error as NodeJS.ErrnoException).code ?? messageOf(error)),
          file: this.#current,
        },
        'cannot write the delivery history: deliveries go on; its records wait in memory (the oldest are dropped beyond 1 MiB) and are written once the disk takes them (check free space and permissions of the state directory)',
      );
    }
  }

  #dropOverflow(): void {
    while (this.#queuedBytes > this.#maxQueuedBytes && this.#queue.length > 1) {
      const oldest = this.#queue.shift()!;
      this.#queuedBytes -= Buffer.byteLength(oldest);
      if (this.#droppedInEpisode++ === 0) {
        this.#log.warn(
          { event: 'history.dropping', file: this.#current },
          'the delivery history cannot keep up with the disk: dropping its oldest records not yet written (deliveries are not affected)',
        );
      }
    }
  }
}
