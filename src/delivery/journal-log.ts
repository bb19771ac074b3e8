import { Buffer } from 'node:buffer';
import { closeSync, fdatasyncSync, fstatSync, fsyncSync, ftruncateSync, openSync, writeSync } from 'node:fs';

/**
 * The journal's append-only log file: each append is one write followed by fdatasync, so a record
 * is on the disk when `append` returns. That is one synced write per step of a delivery, where
 * rewriting a whole file atomically costs a temp file, a rename and two fsyncs.
 */
export class AppendLog {
  readonly path: string;
  readonly #fd: number;
  /** Bytes known to be whole records; a failed append is cut back to this. */
  #size: number;
  #damaged = false;

  /** Opens (creating it, mode 0600) the log at `path` for appending. */
  constructor(path: string) {
    this.path = path;
    this.#fd = openSync(path, 'a', 0o600);
    try {
      this.#size = fstatSync(this.#fd).size;
    } catch (error) {
      closeSync(this.#fd);
      throw error;
    }
  }

  get size(): number {
    return this.#size;
  }

  /**
   * True after an append failed and the half-written bytes could not be cut off: appending more
   * would put whole records after a broken one, so the journal must start a new log first.
   */
  get damaged(): boolean {
    return this.#damaged;
  }

  append(text: string): void {
    const bytes = Buffer.from(text, 'utf8');
    try {
      for (let written = 0; written < bytes.length; ) {
        written += writeSync(this.#fd, bytes, written, bytes.length - written);
      }
      fdatasyncSync(this.#fd);
      this.#size += bytes.length;
    } catch (error) {
      this.#cutBack();
      throw error;
    }
  }

  close(): void {
    try {
      closeSync(this.#fd);
    } catch {
      // Already unusable; nothing more to lose by leaving it.
    }
  }

  #cutBack(): void {
    try {
      ftruncateSync(this.#fd, this.#size);
    } catch {
      this.#damaged = true;
    }
  }
}

/** Makes a rename or a new file in `dir` survive a power cut. */
export function fsyncDirectory(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
