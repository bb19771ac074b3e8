import { join } from 'node:path';
import { messageOf, PorterError } from '../../errors.js';
import { fsyncDirectory, nodeFs, replaceFile, type JournalFs } from './journal-fs.js';
import { AppendLog } from './journal-log.js';
import {
  applyRecord,
  decodeSnapshot,
  encodeRecord,
  encodeSnapshot,
  JournalReadError,
  keyOf,
  replayLog,
  type JournalEntry,
  type JournalRecord,
  type JournalState,
  type Outcome,
} from './journal-records.js';
import { SettledMemory, type SettledId, type SettledLimits } from './settled-memory.js';
import { readStateFileSync, StateFileError } from '../state/state-file.js';

export type { JournalEntry, Outcome } from './journal-records.js';

/**
 * The durable record that makes delivery at-most-once and lossless (docs/design.md, delivery
 * semantics).
 *
 * A claim is written before the command goes anywhere near the game server; its outcome is
 * written before it is reported; once the API accepted the report the entry moves to the memory
 * of settled ids, so an id the API hands out again is never run again. After a crash,
 * `pending()` is exactly the set of commands still owed a report.
 *
 * On disk: `journal.json`, a snapshot replaced atomically, and `journal-<generation>.log`, the
 * records appended since that snapshot. A claim or an outcome is durable when its promise
 * resolves: every record committed in one turn of the event loop goes to the log in one write and
 * one fdatasync (group commit), after the turn (setImmediate). A thousand servers that claim
 * at once cost one sync, not a thousand, and a slow disk holds the event loop once per turn
 * instead of once per record. Every
 * LOG_RECORDS_PER_SNAPSHOT records (at start, and after any failed write) the state is folded
 * into a new snapshot and a new, empty log begins, so the log stays short, the start-up replay
 * fast, and a log that saw a failed write is never appended to again.
 *
 * A write that fails still changes the state in memory (the caller acts on what it decided, and
 * the next successful write, always a fresh snapshot, carries it to the disk); the caller learns
 * of the failure from the JournalWriteError and `writable`.
 */

/** Enough to make the snapshot's rewrite rare (~1 per 700 deliveries), small enough to replay in a blink. */
export const LOG_RECORDS_PER_SNAPSHOT = 2048;

const SNAPSHOT_FILE = 'journal.json';
const LOG_FILE = /^journal-(\d+)\.log$/;

export class JournalWriteError extends PorterError {
  override readonly code = 'E_JOURNAL_WRITE';
}

interface JournalOptions {
  /** For tests that make the disk fail or the process die at any single operation. */
  readonly files?: JournalFs;
  readonly settledLimits?: SettledLimits;
  /** For the age bound of the settled-id memory when the snapshot is written. */
  readonly now?: () => number;
}

/** What the journal knows of a command id the API handed out. */
type Recall = { readonly kind: 'pending'; readonly entry: JournalEntry } | { readonly kind: 'settled'; readonly settled: SettledId };

export class Journal {
  readonly #dir: string;
  readonly #files: JournalFs;
  readonly #now: () => number;
  readonly #state: JournalState;
  #generation: number;
  #log: AppendLog | undefined;
  #recordsInLog = 0;
  /** Settles applied in memory but not yet on disk: they ride along with the next record. */
  #unwrittenSettles: JournalRecord[] = [];
  /** Claims and outcomes of this turn, written together when it ends; their callers wait for it. */
  #batch: Batch | undefined;
  #lastWriteError: Error | undefined;
  #writeFailures = 0;

  constructor(stateDir: string, options: JournalOptions = {}) {
    this.#files = options.files ?? nodeFs;
    this.#now = options.now ?? Date.now;
    this.#files.mkdirSync(stateDir, { recursive: true, mode: 0o700 });
    this.#dir = stateDir;
    const { generation, state } = readState(this.#files, stateDir, new SettledMemory(options.settledLimits));
    this.#generation = generation;
    this.#state = state;
    // Start from a fresh log: whatever a crash left at the end of the old one is folded away. A
    // disk that refuses it leaves the journal not writable: what it holds is still reported, and
    // the delivery loop claims nothing until tryRecover() succeeds.
    this.tryRecover();
    removeLogsOtherThan(this.#files, stateDir, this.#generation);
  }

  /** The snapshot file; the logs sit beside it. */
  get path(): string {
    return join(this.#dir, SNAPSHOT_FILE);
  }

  /**
   * `store`: the store it was claimed for, by the name logs use ("default" for `api`). Resolves once the claim is on the disk; rejects with JournalWriteError when it could not be made
   * durable (it is held in memory all the same).
   */
  claim(serverId: string, id: string, command: string | undefined, now: number, store?: string): Promise<void> {
    return this.#commit({
      op: 'claim',
      serverId,
      id,
      ...(store === undefined ? {} : { store }),
      ...(command === undefined ? {} : { command }),
      at: now,
    });
  }

  /**
   * Resolves once the outcome is on the disk; rejects with JournalWriteError when it could not be
   * made durable (it is held in memory all the same).
   */
  recordOutcome(serverId: string, id: string, outcome: Outcome, now: number): Promise<void> {
    if (!this.#state.entries[keyOf(serverId, id)]) {
      return Promise.reject(new JournalWriteError(`no claim of command ${id} (server ${serverId}) to record an outcome for`));
    }
    return this.#commit({ op: 'outcome', serverId, id, outcome, at: now });
  }

  /**
   * The API accepted the report (or had already settled the command): nothing is owed any more,
   * and the id joins the memory of settled ids. The record is written with the next one (or by
   * `flush` when idle or stopping), not on its own: if porter dies first, the entry is reported
   * once more and the API answers that it is already settled. That saves one of three synced
   * writes per delivery.
   */
  settle(serverId: string, id: string, now: number): void {
    if (!(keyOf(serverId, id) in this.#state.entries)) return;
    const record: JournalRecord = { op: 'settle', serverId, id, at: now };
    applyRecord(this.#state, record);
    this.#unwrittenSettles.push(record);
  }

  /** Writes at once what is still only in memory: this turn's records and settled removals. */
  flush(): void {
    if (this.#batch) this.#writeBatch();
    else if (this.#unwrittenSettles.length > 0) this.#write([]);
  }

  /** Whether `id` is still owed a report or was settled lately (see SettledMemory for the bounds). */
  recall(serverId: string, id: string, now: number): Recall | undefined {
    const entry = this.#state.entries[keyOf(serverId, id)];
    if (entry) return { kind: 'pending', entry };
    const settled = this.#state.settled.recall(serverId, id, now);
    return settled ? { kind: 'settled', settled } : undefined;
  }

  pending(serverId?: string): JournalEntry[] {
    const all = Object.values(this.#state.entries);
    return serverId === undefined ? all : all.filter((entry) => entry.serverId === serverId);
  }

  /** False from a failed write until the next one succeeds: porter claims nothing meanwhile. */
  get writable(): boolean {
    return this.#lastWriteError === undefined;
  }

  /** The last write failure, cleared by the next successful write (for /healthz). */
  get lastWriteError(): Error | undefined {
    return this.#lastWriteError;
  }

  /** How many writes have failed since start (for /metrics). */
  get writeFailures(): number {
    return this.#writeFailures;
  }

  /**
   * After a failed write: tries to make the whole state durable again (a fresh snapshot and log).
   * True when the journal is writable again; never throws.
   */
  tryRecover(): boolean {
    try {
      this.#guarded(() => this.#startNewLog());
      return true;
    } catch {
      return false;
    }
  }

  /** Writes this turn's records first, so that no caller is left waiting on a closed journal. */
  close(): void {
    if (this.#batch) {
      try {
        this.#writeBatch();
      } catch {
        // Its callers were told (their promises rejected); what they committed is reported as unknown after a restart.
      }
    }
    this.#log?.close();
    this.#log = undefined;
  }

  #commit(record: JournalRecord): Promise<void> {
    applyRecord(this.#state, record);
    let batch = this.#batch;
    if (!batch) {
      batch = { records: [], waiters: [] };
      this.#batch = batch;
      const scheduled = batch;
      setImmediate(() => {
        if (this.#batch === scheduled) this.#writeBatchQuietly();
      });
    }
    batch.records.push(record);
    const waiter = durability();
    batch.waiters.push(waiter);
    return waiter.promise;
  }

  /** The batch's callers learn of a failure from their promises. */
  #writeBatchQuietly(): void {
    try {
      this.#writeBatch();
    } catch {
      // Rejected to every caller of the batch already.
    }
  }

  #writeBatch(): void {
    const batch = this.#batch;
    if (!batch) return;
    this.#batch = undefined;
    try {
      this.#write(batch.records);
    } catch (error) {
      for (const waiter of batch.waiters) waiter.reject(error);
      throw error;
    }
    for (const waiter of batch.waiters) waiter.resolve();
  }

  /** `records` are applied in memory already; the settles still unwritten ride along. */
  #write(records: readonly JournalRecord[]): void {
    records = [...this.#unwrittenSettles, ...records];
    this.#guarded(() => {
      // After a failed write the state goes to the disk whole, as a new snapshot, instead.
      if (this.#log === undefined || this.#log.damaged) return this.#startNewLog();
      this.#log.append(records.map(encodeRecord).join(''));
      this.#unwrittenSettles = [];
      this.#recordsInLog += records.length;
    });
    if (this.#recordsInLog >= LOG_RECORDS_PER_SNAPSHOT) this.tryRecover();
  }

  /**
   * Folds the state into a new snapshot and opens an empty log. Its order makes every crash point
   * safe: the snapshot naming generation G+1 is written (atomically) before log G+1 exists, and
   * log G is ignored from then on. The snapshot holds everything in memory, settles included.
   */
  #startNewLog(): void {
    const next = this.#generation + 1;
    const previous = this.#log;
    this.#log = undefined;
    previous?.close();
    const settled = this.#state.settled.prune(this.#now());
    replaceFile(this.#files, this.#dir, SNAPSHOT_FILE, encodeSnapshot(next, this.#state.entries, settled));
    this.#generation = next;
    this.#unwrittenSettles = [];
    const log = new AppendLog(this.#files, join(this.#dir, logName(next)));
    try {
      // One sync covers the snapshot's rename and the new log's directory entry.
      fsyncDirectory(this.#files, this.#dir);
    } catch (error) {
      // Records in a log whose name may not survive a power cut would not count: start again next write.
      log.close();
      throw error;
    }
    this.#log = log;
    this.#recordsInLog = 0;
    // The snapshot holds this turn's records too: they are durable now, and appended again a claim
    // would wipe an outcome the snapshot already holds when the log is replayed.
    const covered = this.#batch;
    this.#batch = undefined;
    for (const waiter of covered?.waiters ?? []) waiter.resolve();
    if (previous) unlinkQuietly(this.#files, previous.path);
  }

  #guarded(write: () => void): void {
    try {
      write();
      this.#lastWriteError = undefined;
    } catch (error) {
      this.#lastWriteError = error as Error;
      this.#writeFailures++;
      throw new JournalWriteError(
        error instanceof StateFileError
          ? `cannot write the delivery journal in ${this.#dir}: ${error.message}`
          : `cannot write the delivery journal in ${this.#dir} (${(error as NodeJS.ErrnoException).code ?? messageOf(error)}): check that the state directory is writable and the disk is not full`,
        { cause: error },
      );
    }
  }
}

/**
 * The entries a journal in `stateDir` holds, without writing anything: for `porter check` while
 * a daemon may be running. An empty or missing directory holds none.
 */
export function readJournal(stateDir: string): JournalEntry[] {
  let names: string[];
  try {
    names = nodeFs.readdirSync(stateDir);
  } catch {
    return [];
  }
  if (!names.includes(SNAPSHOT_FILE)) return [];
  return Object.values(readState(nodeFs, stateDir, new SettledMemory()).state.entries);
}

function readState(files: JournalFs, stateDir: string, settled: SettledMemory): { generation: number; state: JournalState } {
  const snapshotPath = join(stateDir, SNAPSHOT_FILE);
  const snapshotText = readOptional(files, snapshotPath);
  if (snapshotText === undefined) return { generation: 0, state: { entries: {}, settled } };
  const snapshot = decodeSnapshot(snapshotText, settled);
  if (!snapshot) {
    throw new JournalReadError(
      `cannot read the delivery journal ${snapshotPath} (it is not a journal snapshot porter wrote): keep a copy of the file, settle the commands it lists from the store dashboard, then move it away and start porter again`,
    );
  }
  const logPath = join(stateDir, logName(snapshot.generation));
  const text = readOptional(files, logPath);
  if (text !== undefined) replayLog(snapshot.state, text, logPath);
  return { generation: snapshot.generation, state: snapshot.state };
}

/** A journal file that is not a regular file is a StateFileError (exit 78): a FIFO would block the read forever. */
function readOptional(files: JournalFs, path: string): string | undefined {
  try {
    return readStateFileSync(path, files).text;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    if (error instanceof StateFileError) throw error;
    throw new JournalReadError(
      `cannot read the delivery journal ${path} (${(error as NodeJS.ErrnoException).code ?? messageOf(error)}): check the state directory's permissions`,
      { cause: error },
    );
  }
}

function logName(generation: number): string {
  return `journal-${generation}.log`;
}

function removeLogsOtherThan(files: JournalFs, stateDir: string, generation: number): void {
  for (const name of files.readdirSync(stateDir)) {
    const match = LOG_FILE.exec(name);
    if (match && Number(match[1]) !== generation) unlinkQuietly(files, join(stateDir, name));
  }
}

function unlinkQuietly(files: JournalFs, path: string): void {
  try {
    files.unlinkSync(path);
  } catch {
    // A stale log is ignored on read (its generation is not the snapshot's), so one left behind is harmless.
  }
}

interface Waiter {
  readonly promise: Promise<void>;
  readonly resolve: () => void;
  readonly reject: (error: unknown) => void;
}

interface Batch {
  readonly records: JournalRecord[];
  readonly waiters: Waiter[];
}

/** A caller's wait for its batch (Promise.withResolvers, which Node 20 lacks). */
function durability(): Waiter {
  let resolve!: () => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}
