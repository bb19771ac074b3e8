import { Buffer } from 'node:buffer';
import { constants } from 'node:fs';
import { writeAll, type JournalFs } from './journal-fs.js';
import { openStateFileSync } from '../state/state-file.js';

/**
 * The journal's append-only log file: each append is one write followed by fdatasync, so a record
 * is on the disk when `append` returns. That is one synced write per step of a delivery, where
 * rewriting a whole file atomically costs a temp file, a rename and two fsyncs.
 */
export class AppendLog {
  readonly path: string;
  readonly #files: JournalFs;
  readonly #fd: number;
  #damaged = false;

  /** Opens (creating it, mode 0600) the log at `path` for appending; a FIFO or other non-regular file there is a StateFileError. */
  constructor(files: JournalFs, path: string) {
    this.path = path;
    this.#files = files;
    this.#fd = openStateFileSync(path, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT, 0o600, files);
  }

  /**
   * True after an append failed. Half-written bytes may sit at the end, and after a failed
   * fdatasync Linux may have dropped the unsynced pages while marking them clean, so a later sync
   * could not be trusted either: the journal starts a new log rather than append here again.
   */
  get damaged(): boolean {
    return this.#damaged;
  }

  append(text: string): void {
    try {
      writeAll(this.#files, this.#fd, Buffer.from(text, 'utf8'));
      this.#files.fdatasyncSync(this.#fd);
    } catch (error) {
      this.#damaged = true;
      throw error;
    }
  }

  close(): void {
    try {
      this.#files.closeSync(this.#fd);
    } catch {
      // Already unusable; nothing more to lose by leaving it.
    }
  }
}
