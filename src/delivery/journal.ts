import { closeSync, fsyncSync, mkdirSync, openSync } from 'node:fs';
import Conf from 'conf';
import { PorterError } from '../errors.js';

/**
 * The durable record that makes delivery at-most-once and lossless (DESIGN §2).
 *
 * A claim is written before the command goes anywhere near the game server; its outcome is
 * written before it is reported; the entry is removed once the API accepted the report. After a
 * crash, `pending()` is exactly the set of commands still owed a report. conf writes the file
 * atomically (temp file, fsync, rename); the directory is fsynced after each write so the rename
 * itself survives a power cut.
 */

export type Outcome = { readonly result: 'done' } | { readonly result: 'failed'; readonly reason: string };

export interface JournalEntry {
  readonly serverId: string;
  readonly id: string;
  readonly command?: string;
  readonly claimedAt: number;
  readonly outcome?: Outcome;
  readonly outcomeAt?: number;
}

type Store = Record<string, JournalEntry>;

export class JournalWriteError extends PorterError {
  override readonly code = 'E_JOURNAL_WRITE';
}

export class Journal {
  readonly #conf: Conf<Store>;
  readonly #dir: string;
  /** Mirror of the file: conf re-reads the file on every access, and the loop asks often. */
  #entries: Store;
  #lastWriteError: Error | undefined;
  /** Settled entries removed in memory but not yet on disk. */
  #unwritten = false;

  constructor(stateDir: string) {
    mkdirSync(stateDir, { recursive: true, mode: 0o700 });
    this.#dir = stateDir;
    this.#conf = new Conf<Store>({
      cwd: stateDir,
      configName: 'journal',
      accessPropertiesByDotNotation: false,
      serialize: (value) => JSON.stringify(value),
      configFileMode: 0o600,
    });
    this.#entries = { ...this.#conf.store };
  }

  get path(): string {
    return this.#conf.path;
  }

  claim(serverId: string, id: string, command: string | undefined, now: number): void {
    this.#put({ serverId, id, ...(command === undefined ? {} : { command }), claimedAt: now });
  }

  recordOutcome(serverId: string, id: string, outcome: Outcome, now: number): void {
    const entry = this.#entries[keyOf(serverId, id)];
    if (!entry) throw new JournalWriteError(`no claim of command ${id} (server ${serverId}) to record an outcome for`);
    this.#put({ ...entry, outcome, outcomeAt: now });
  }

  /**
   * The API accepted the report (or had already settled the command): nothing is owed any more.
   * The removal is written with the next claim (or by `flush` when idle or stopping), not on its
   * own: if porter dies first, the entry is reported once more and the API answers that it is
   * already settled. That saves one of three synced writes per delivery.
   */
  settle(serverId: string, id: string): void {
    const key = keyOf(serverId, id);
    if (!(key in this.#entries)) return;
    const { [key]: _settled, ...rest } = this.#entries;
    this.#entries = rest;
    this.#unwritten = true;
  }

  /** Writes settled removals that are still only in memory. */
  flush(): void {
    if (this.#unwritten) this.#write(this.#entries);
  }

  pending(serverId?: string): JournalEntry[] {
    const all = Object.values(this.#entries);
    return serverId === undefined ? all : all.filter((entry) => entry.serverId === serverId);
  }

  /** The last write failure, cleared by the next successful write (for /healthz). */
  get lastWriteError(): Error | undefined {
    return this.#lastWriteError;
  }

  #put(entry: JournalEntry): void {
    this.#write({ ...this.#entries, [keyOf(entry.serverId, entry.id)]: entry });
  }

  #write(next: Store): void {
    try {
      this.#conf.store = next;
      fsyncDirectory(this.#dir);
      this.#entries = next;
      this.#unwritten = false;
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

function keyOf(serverId: string, id: string): string {
  return `${serverId}/${id}`;
}

function fsyncDirectory(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
