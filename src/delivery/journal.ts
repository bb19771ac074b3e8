import { mkdirSync, readdirSync, readFileSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import Conf from 'conf';
import { PorterError } from '../errors.js';
import { AppendLog, fsyncDirectory } from './journal-log.js';
import {
  applyRecord,
  encodeRecord,
  JournalReadError,
  keyOf,
  replayLog,
  snapshotFrom,
  type Entries,
  type JournalEntry,
  type JournalRecord,
  type Outcome,
} from './journal-records.js';

export type { JournalEntry, Outcome } from './journal-records.js';

/**
 * The durable record that makes delivery at-most-once and lossless (DESIGN §2).
 *
 * A claim is written before the command goes anywhere near the game server; its outcome is
 * written before it is reported; the entry is removed once the API accepted the report. After a
 * crash, `pending()` is exactly the set of commands still owed a report.
 *
 * On disk: `journal.json`, a snapshot kept by conf (atomic rewrite), and `journal-<generation>.log`,
 * the records appended since that snapshot, each synced before the call returns. Every
 * LOG_RECORDS_PER_SNAPSHOT records (and at start) the entries are folded into a new snapshot and a
 * new, empty log begins, so the log stays short and the start-up replay fast.
 */

/** Enough to make the snapshot's rewrite rare (~1 per 700 deliveries), small enough to replay in a blink. */
export const LOG_RECORDS_PER_SNAPSHOT = 2048;

const SNAPSHOT_NAME = 'journal';
const LOG_FILE = /^journal-(\d+)\.log$/;

export class JournalWriteError extends PorterError {
  override readonly code = 'E_JOURNAL_WRITE';
}

export class Journal {
  readonly #dir: string;
  readonly #snapshot: Conf<Record<string, unknown>>;
  #generation: number;
  #entries: Entries;
  #log: AppendLog | undefined;
  #recordsInLog = 0;
  /** Settled entries removed in memory but not yet on disk. */
  #unwrittenSettles: JournalRecord[] = [];
  #lastWriteError: Error | undefined;

  constructor(stateDir: string) {
    mkdirSync(stateDir, { recursive: true, mode: 0o700 });
    this.#dir = stateDir;
    this.#snapshot = openSnapshot(stateDir);
    const { generation, entries } = readState(stateDir, this.#snapshot);
    this.#generation = generation;
    this.#entries = entries;
    // Start from a fresh log: whatever a crash left at the end of the old one is folded away.
    this.#guarded(() => this.#startNewLog());
    removeLogsOtherThan(stateDir, this.#generation);
  }

  /** The snapshot file; the logs sit beside it. */
  get path(): string {
    return this.#snapshot.path;
  }

  claim(serverId: string, id: string, command: string | undefined, now: number): void {
    this.#write({ op: 'claim', serverId, id, ...(command === undefined ? {} : { command }), at: now });
  }

  recordOutcome(serverId: string, id: string, outcome: Outcome, now: number): void {
    if (!this.#entries[keyOf(serverId, id)]) {
      throw new JournalWriteError(`no claim of command ${id} (server ${serverId}) to record an outcome for`);
    }
    this.#write({ op: 'outcome', serverId, id, outcome, at: now });
  }

  /**
   * The API accepted the report (or had already settled the command): nothing is owed any more.
   * The removal is written with the next record (or by `flush` when idle or stopping), not on its
   * own: if porter dies first, the entry is reported once more and the API answers that it is
   * already settled. That saves one of three synced writes per delivery.
   */
  settle(serverId: string, id: string): void {
    if (!(keyOf(serverId, id) in this.#entries)) return;
    const record: JournalRecord = { op: 'settle', serverId, id };
    applyRecord(this.#entries, record);
    this.#unwrittenSettles.push(record);
  }

  /** Writes settled removals that are still only in memory. */
  flush(): void {
    if (this.#unwrittenSettles.length > 0) this.#write();
  }

  pending(serverId?: string): JournalEntry[] {
    const all = Object.values(this.#entries);
    return serverId === undefined ? all : all.filter((entry) => entry.serverId === serverId);
  }

  /** The last write failure, cleared by the next successful write (for /healthz). */
  get lastWriteError(): Error | undefined {
    return this.#lastWriteError;
  }

  #write(record?: JournalRecord): void {
    const records = record ? [...this.#unwrittenSettles, record] : this.#unwrittenSettles;
    this.#guarded(() => {
      if (this.#log === undefined || this.#log.damaged) this.#startNewLog();
      this.#log!.append(records.map(encodeRecord).join(''));
    });
    if (record) applyRecord(this.#entries, record);
    this.#unwrittenSettles = [];
    this.#recordsInLog += records.length;
    if (this.#recordsInLog >= LOG_RECORDS_PER_SNAPSHOT) this.#compactQuietly();
  }

  /**
   * Folds the log into a new snapshot. Its order makes every crash point safe: the snapshot naming
   * generation G+1 is written (atomically) before log G+1 exists, and log G is ignored from then on.
   */
  #startNewLog(): void {
    const next = this.#generation + 1;
    this.#snapshot.store = { generation: next, entries: this.#entries };
    this.#generation = next;
    this.#unwrittenSettles = [];
    const previous = this.#log;
    this.#log = undefined;
    previous?.close();
    const log = new AppendLog(join(this.#dir, logName(next)));
    try {
      // One sync covers the snapshot's rename and the new log's directory entry.
      fsyncDirectory(this.#dir);
    } catch (error) {
      // Records in a log whose name may not survive a power cut would not count: start again next write.
      log.close();
      throw error;
    }
    this.#log = log;
    this.#recordsInLog = 0;
    if (previous) unlinkQuietly(previous.path);
  }

  /** A snapshot that fails is tried again after the next record; the log keeps growing meanwhile. */
  #compactQuietly(): void {
    try {
      this.#guarded(() => this.#startNewLog());
    } catch {
      // Recorded in lastWriteError; appends go on in the current log, or fail loudly if there is none.
    }
  }

  #guarded(write: () => void): void {
    try {
      write();
      this.#lastWriteError = undefined;
    } catch (error) {
      this.#lastWriteError = error as Error;
      throw new JournalWriteError(
        `cannot write the delivery journal in ${this.#dir} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}): check that the state directory is writable and the disk is not full`,
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
    names = readdirSync(stateDir);
  } catch {
    return [];
  }
  if (!names.includes(`${SNAPSHOT_NAME}.json`)) return [];
  return Object.values(readState(stateDir, openSnapshot(stateDir)).entries);
}

/** conf reads the file as it opens it, so a damaged snapshot is reported from here. */
function openSnapshot(stateDir: string): Conf<Record<string, unknown>> {
  try {
    return new Conf<Record<string, unknown>>({
      cwd: stateDir,
      configName: SNAPSHOT_NAME,
      accessPropertiesByDotNotation: false,
      serialize: (value) => JSON.stringify(value),
      configFileMode: 0o600,
    });
  } catch (error) {
    throw new JournalReadError(
      `cannot read the delivery journal ${join(stateDir, `${SNAPSHOT_NAME}.json`)} (${(error as Error).message}): keep a copy of the file, settle the commands it lists from the store dashboard, then move it away and start porter again`,
      { cause: error },
    );
  }
}

function readState(stateDir: string, snapshot: Conf<Record<string, unknown>>): { generation: number; entries: Entries } {
  const { generation, entries } = snapshotFrom(snapshot.store);
  const logPath = join(stateDir, logName(generation));
  let text: string;
  try {
    text = readFileSync(logPath, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { generation, entries };
    throw new JournalReadError(`cannot read the delivery journal ${logPath} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}): check the state directory's permissions`, {
      cause: error,
    });
  }
  replayLog(entries, text, logPath);
  return { generation, entries };
}


function logName(generation: number): string {
  return `journal-${generation}.log`;
}

function removeLogsOtherThan(stateDir: string, generation: number): void {
  for (const name of readdirSync(stateDir)) {
    const match = LOG_FILE.exec(name);
    if (match && Number(match[1]) !== generation) unlinkQuietly(join(stateDir, name));
  }
}

function unlinkQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // A stale log is ignored on read (its generation is not the snapshot's), so one left behind is harmless.
  }
}
