import { constants, statSync } from 'node:fs';
import { rename, stat, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { messageOf, PorterError } from '../../errors.js';
import { parseHistoryLine, type HistoryRecord } from './history-record.js';
import { openStateFile, StateFileError } from '../state/state-file.js';

/**
 * The delivery history's two files in stateDir and how they are read back. The writer appends to
 * `history.jsonl`; when the next lines would take it over its bound it renames it over
 * `history.1.jsonl` (one rename, atomic) and starts a new one, so the two together never hold more
 * than twice the bound. `porter history` and /history read while the daemon writes: a line being
 * appended, a line a crash cut short, and a rotation between opening the two files must all be
 * survivable.
 */

export const HISTORY_FILE = 'history.jsonl';
export const PREVIOUS_HISTORY_FILE = 'history.1.jsonl';

/**
 * The file operations the history writer performs, passed in so that tests can make the disk
 * fail, stall or die at any one of them. Asynchronous because the writer must never hold the event
 * loop (and so the deliveries) while a disk is slow; the real `identify` alone is a synchronous
 * stat behind the promise (see there).
 */
export interface HistoryWriteFs {
  /** The file's size and whether it ends with a whole line; 0 and true when it does not exist. */
  inspect(path: string): Promise<{ size: number; endsWithNewline: boolean }>;
  /** Opens for appending, creating the file (mode 0600) when missing. */
  open(path: string): Promise<HistoryAppendFile>;
  /** Which file the name names now, and its size; undefined when nothing does. */
  identify(path: string): Promise<FileIdentity | undefined>;
  rename(from: string, to: string): Promise<void>;
}

export interface FileIdentity {
  readonly dev: number;
  readonly ino: number;
  readonly size: number;
}

/** The current file, held open between records: opening it for each record cost more than the write. */
export interface HistoryAppendFile {
  /** The file opened, to tell whether its name still names it. */
  readonly dev: number;
  readonly ino: number;
  append(text: string): Promise<void>;
  close(): Promise<void>;
}

export const nodeHistoryWriteFs: HistoryWriteFs = {
  async inspect(path) {
    const handle = await openIfPresent(path);
    if (!handle) return { size: 0, endsWithNewline: true };
    try {
      const { size } = await handle.stat();
      if (size === 0) return { size, endsWithNewline: true };
      const { buffer } = await handle.read({ buffer: Buffer.alloc(1), position: size - 1 });
      return { size, endsWithNewline: buffer[0] === 0x0a };
    } finally {
      await handle.close();
    }
  },
  async open(path) {
    // Not appendFile(path): opening a FIFO for writing would hold a threadpool thread until a reader came.
    const handle = await openStateFile(path, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT, 0o600);
    try {
      const { dev, ino } = await handle.stat();
      return { dev, ino, append: (text) => handle.appendFile(text, { encoding: 'utf8' }), close: () => handle.close() };
    } catch (error) {
      await handle.close();
      throw error;
    }
  },
  // Synchronous, unlike the rest: it runs before every append, and a stat that finds its inode
  // in the cache costs ~4 µs on the event loop where a trip through the threadpool costs ~36 µs
  // of CPU (a futex wake, an eventfd write, a loop wake-up); the journal's synced writes already
  // hold the loop on the same disk for far longer.
  identify(path) {
    try {
      const { dev, ino, size } = statSync(path);
      return Promise.resolve({ dev, ino, size });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return Promise.resolve(undefined);
      return Promise.reject(error);
    }
  },
  rename,
};

/** What the reader needs of the file system; tests put a rotation between its steps. */
export interface HistoryReadFs {
  /** Opens for reading; undefined when the file does not exist. */
  open(path: string): Promise<FileHandle | undefined>;
  /** The file's inode; undefined when it does not exist. */
  inode(path: string): Promise<number | undefined>;
}

export const nodeHistoryReadFs: HistoryReadFs = {
  open: openIfPresent,
  async inode(path) {
    try {
      return (await stat(path)).ino;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
  },
};

/** The history's files exist but cannot be read (permissions, an I/O error). */
export class HistoryReadError extends PorterError {
  override readonly code = 'E_HISTORY_READ';
}

/** A rotation lands between the two opens only when the writer fills megabytes within microseconds. */
const MAX_OPEN_ATTEMPTS = 5;
/** Lines parsed between two turns of the event loop: /history is read inside the delivering daemon. */
const LINES_PER_TURN = 2000;

/**
 * Every record of the history in stateDir, oldest first: the previous file, then the current one.
 * Lines that are not records (cut short by a crash, zeros after a power cut) are skipped. A
 * command recorded twice (a crash between the history's write and the journal's, then the
 * command settled again at start) appears once, as first recorded, with a later record's
 * `reportRefused` (the API refused its report for good) added. Never throws for what a
 * crash leaves; files it may not read are a HistoryReadError saying what to do, and a file that
 * is not a regular file a StateFileError.
 */
export async function readHistory(stateDir: string, files: HistoryReadFs = nodeHistoryReadFs): Promise<HistoryRecord[]> {
  try {
    return await readBothFiles(stateDir, files);
  } catch (error) {
    // Its message names the file, what it is and what to do; exit 78 like at start.
    if (error instanceof StateFileError) throw error;
    const code = (error as NodeJS.ErrnoException).code ?? messageOf(error);
    throw new HistoryReadError(
      `cannot read the delivery history in ${stateDir} (${code}): run this as a user who may read the state directory (porter's own user, or root with sudo)`,
      { cause: error },
    );
  }
}

async function readBothFiles(stateDir: string, files: HistoryReadFs): Promise<HistoryRecord[]> {
  const currentPath = join(stateDir, HISTORY_FILE);
  const previousPath = join(stateDir, PREVIOUS_HISTORY_FILE);
  for (let attempt = 1; ; attempt++) {
    const current = await files.open(currentPath);
    let previous: FileHandle | undefined;
    try {
      const currentInode = current ? (await current.stat()).ino : undefined;
      previous = await files.open(previousPath);
      // The current file's name still names what was opened: no rotation came between the two
      // opens, so `previous` is the file before `current` and the two read as one history.
      const stable = (await files.inode(currentPath)) === currentInode;
      if (stable || attempt >= MAX_OPEN_ATTEMPTS) {
        const previousIsCurrent = previous !== undefined && currentInode !== undefined && (await previous.stat()).ino === currentInode;
        const texts = [previousIsCurrent ? '' : await readAll(previous), await readAll(current)];
        return await parseTexts(texts);
      }
    } finally {
      await Promise.allSettled([current?.close(), previous?.close()]);
    }
  }
}

async function readAll(handle: FileHandle | undefined): Promise<string> {
  return handle ? handle.readFile({ encoding: 'utf8' }) : '';
}

/** Each file on its own: a line a crash cut short at the end of one must not swallow the first line of the next. */
async function parseTexts(texts: readonly string[]): Promise<HistoryRecord[]> {
  const records: HistoryRecord[] = [];
  const seen = new Map<string, number>();
  let parsed = 0;
  for (const text of texts) {
    for (const line of text.split('\n')) {
      if (++parsed % LINES_PER_TURN === 0) await nextTurn();
      const record = parseHistoryLine(line);
      if (!record) continue;
      const key = `${record.serverId}/${record.id}`;
      const first = seen.get(key);
      if (first !== undefined) {
        // The API refused the report of a command recorded before: the first record says so too.
        if (record.reportRefused !== undefined) records[first] = { ...records[first]!, reportRefused: record.reportRefused };
        continue;
      }
      seen.set(key, records.length);
      records.push(record);
    }
  }
  return records;
}

/** A FIFO, socket, device or directory in place of the file is a StateFileError, never a wait for a writer. */
async function openIfPresent(path: string): Promise<FileHandle | undefined> {
  try {
    return await openStateFile(path, constants.O_RDONLY);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}
