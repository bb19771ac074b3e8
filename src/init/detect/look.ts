import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { errorCode, READ_LIMIT, type FileSeam } from './files.js';
import type { Note } from './types.js';

/** A settings file as read: its bytes and how to name it to the user. */
export interface LoadedFile {
  readonly path: string;
  readonly shown: string;
  readonly bytes: Buffer;
}

/** Errors that only mean "not here": silent, since most places looked at hold nothing. */
const ABSENT = new Set(['ENOENT', 'ENOTDIR']);

/**
 * How detection looks at the file system: reads that never throw, at most READ_LIMIT bytes, each
 * path read once, and one note for each place that could not be looked at, saying why.
 */
export class Look {
  readonly #files: FileSeam;
  readonly #dir: string;
  readonly #home: string | undefined;
  readonly #notes = new Map<string, string>();
  readonly #read = new Set<string>();

  constructor(files: FileSeam, dir: string, home: string | undefined) {
    this.#files = files;
    this.#dir = resolve(dir);
    this.#home = home === undefined || home === '' ? undefined : resolve(home);
  }

  get notes(): Note[] {
    return [...this.#notes].map(([path, message]) => ({ path, message }));
  }

  /** A path as the user knows it: `./…` under the folder given, `~/…` under the home folder. */
  shown(path: string): string {
    const under = (base: string) => {
      const rest = relative(base, path);
      return rest !== '' && !rest.startsWith('..') && !isAbsolute(rest) ? rest : undefined;
    };
    const inDir = under(this.#dir);
    if (inDir !== undefined) return `.${sep}${inDir}`;
    const inHome = this.#home && under(this.#home);
    return inHome ? `~${sep}${inHome}` : path;
  }

  read(path: string): LoadedFile | undefined {
    try {
      const { bytes, complete } = this.#files.readFile(path, READ_LIMIT);
      if (!complete) {
        this.note(path, `skipped: larger than ${READ_LIMIT / 1024 / 1024} MiB, so not a settings file`);
        return undefined;
      }
      return { path, shown: this.shown(path), bytes };
    } catch (error) {
      this.#failed(path, error);
      return undefined;
    }
  }

  /** Names in a folder, or none if it cannot be listed. */
  list(dir: string): string[] {
    try {
      return this.#files.readDir(dir).sort();
    } catch (error) {
      this.#failed(dir, error);
      return [];
    }
  }

  /** Whether the folder holds an entry of that name, compared without case (server folders come from Windows too). */
  has(dir: string, name: string): boolean {
    const lower = name.toLowerCase();
    return this.list(dir).some((entry) => entry.toLowerCase() === lower);
  }

  /** The entries of `dir` whose names match, as full paths. */
  matching(dir: string, pattern: RegExp): string[] {
    return this.list(dir)
      .filter((name) => pattern.test(name))
      .map((name) => join(dir, name));
  }

  /**
   * True the first time a file (by device and inode) is offered in `scope`, so one file is never
   * reported twice for the same game, even when reached by two paths (a process's /proc link and
   * the folder given).
   */
  firstVisit(path: string, scope: string): boolean {
    let id: string;
    try {
      id = this.#files.fileId(path);
    } catch {
      id = resolve(path);
    }
    const key = `${scope}\0${id}`;
    if (this.#read.has(key)) return false;
    this.#read.add(key);
    return true;
  }

  note(path: string, message: string): void {
    const shown = this.shown(path);
    if (!this.#notes.has(shown)) this.#notes.set(shown, message);
  }

  #describe(code: string | undefined): string {
    switch (code) {
      case 'EACCES':
      case 'EPERM':
        return 'skipped: permission denied (run porter init as a user who can read it, or point --game-dir elsewhere)';
      case 'ELOOP':
        return 'skipped: a loop of symbolic links';
      case 'EISDIR':
      case 'ENOTREG':
        return 'skipped: not a regular file';
      default:
        return `skipped: cannot be read (${code ?? 'unknown error'})`;
    }
  }

  #failed(path: string, error: unknown): void {
    const code = errorCode(error);
    if (code !== undefined && ABSENT.has(code)) return;
    this.note(path, this.#describe(code));
  }
}
