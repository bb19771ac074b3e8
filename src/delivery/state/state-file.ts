import * as fs from 'node:fs';
import { open, stat, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { ConfigError } from '../../errors.js';

/**
 * The files porter keeps in stateDir (the lock, the journal, the history) must be regular files.
 * A FIFO, a socket, a device or a directory in place of one is not something porter can use, and
 * a FIFO is worse than that: opening it for reading blocks until a writer appears, on the main
 * thread for a synchronous open and on a libuv threadpool thread for an asynchronous one (four of
 * those stall every file operation of the process, and a pending one keeps a stopped porter from
 * exiting). So every open of a state file here is non-blocking (O_NONBLOCK: a FIFO opens at once
 * for reading and fails with ENXIO for writing; it changes nothing for a regular file), what was
 * opened is fstat'ed, and anything but a regular file is refused naming the path, what it is and
 * the fix (docs/design.md#the-state-directory). Symbolic links are followed and judged by what
 * they point at, as before.
 */

/** A state file is not a regular file: restarting cannot fix it, so exit 78. */
export class StateFileError extends ConfigError {
  override readonly code = 'E_STATE_FILE';
}

/** The names porter gives its files in stateDir: porter.lock, the journal's, the history's. */
const NAMES = new Set(['porter.lock', 'journal.json', '.journal.json.tmp', 'history.jsonl', 'history.1.jsonl']);
const JOURNAL_LOG = /^journal-\d+\.log$/;

export function isStateFileName(name: string): boolean {
  return NAMES.has(name) || JOURNAL_LOG.test(name);
}

/**
 * Throws a StateFileError naming every file of porter's in `dir` that is not a regular file (run
 * at start and by `porter check`, so that such a file is exit 78 before anything opens it).
 */
export function checkStateFiles(dir: string): void {
  let names: string[];
  try {
    names = fs.readdirSync(dir).sort();
  } catch {
    // A directory porter may write but not list: the journal's own open reports what is wrong.
    return;
  }
  const problems: string[] = [];
  const foreign: string[] = [];
  for (const name of names) {
    if (!isStateFileName(name)) continue;
    const path = join(dir, name);
    const kind = kindAt(path);
    if (kind !== undefined) problems.push(notRegularText(path, kind));
    else if (!readWritable(path)) foreign.push(path);
  }
  if (foreign.length > 0) problems.push(notPorterUsersText(dir, foreign));
  if (problems.length > 0) throw new StateFileError(problems.join('. '));
}

/**
 * A state directory anyone may write (chmod 0777) can still hold files of another uid's (a volume
 * first used by a container running as another user, a restore run as root): porter can create
 * files beside them but not read them, and the lock's first read would fail with a bare EACCES.
 */
function readWritable(path: string): boolean {
  try {
    fs.accessSync(path, fs.constants.R_OK | fs.constants.W_OK);
    return true;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code !== 'EACCES' && code !== 'EPERM';
  }
}

function notPorterUsersText(dir: string, paths: readonly string[]): string {
  const uid = process.getuid?.();
  const owners = [
    ...new Set(paths.map((path) => fs.statSync(path, { throwIfNoEntry: false })?.uid).filter((owner) => owner !== undefined)),
  ];
  const whose = owners.length > 0 ? `uid ${owners.join(', uid ')}` : 'another user';
  const fix = uid === undefined ? `chown -R <porter's user> ${dir}` : `chown -R ${uid} ${dir}`;
  return (
    `state file${paths.length > 1 ? 's' : ''} ${paths.join(', ')} belong${paths.length > 1 ? '' : 's'} to ${whose}, and porter's user (uid ${uid ?? '?'}) may not read and write ${paths.length > 1 ? 'them' : 'it'} (EACCES): ` +
    `give the state directory's files to porter's user (as root: ${fix}), or run porter as the user that owns them`
  );
}

type SyncFiles = Pick<typeof fs, 'openSync' | 'fstatSync' | 'closeSync'>;

/** openSync that never blocks on a FIFO and returns only a regular file's descriptor. */
export function openStateFileSync(path: string, flags: number, mode?: number, files: SyncFiles = fs): number {
  let fd: number;
  try {
    fd = files.openSync(path, flags | NONBLOCK, mode);
  } catch (error) {
    throw explainOpenError(path, error);
  }
  let kind: string | undefined;
  try {
    kind = kindOf(files.fstatSync(fd));
  } catch (error) {
    files.closeSync(fd);
    throw error;
  }
  if (kind === undefined) return fd;
  files.closeSync(fd);
  throw new StateFileError(notRegularText(path, kind));
}

/** The whole text of a regular file, with its stats; throws ENOENT when missing, StateFileError when not a regular file. */
export function readStateFileSync(
  path: string,
  files: SyncFiles & Pick<typeof fs, 'readFileSync'> = fs,
): { readonly text: string; readonly stats: fs.Stats } {
  const fd = openStateFileSync(path, fs.constants.O_RDONLY, undefined, files);
  try {
    return { stats: files.fstatSync(fd), text: files.readFileSync(fd, 'utf8') };
  } finally {
    files.closeSync(fd);
  }
}

/** The asynchronous open, with the same guarantees as openStateFileSync. */
export async function openStateFile(path: string, flags: number, mode?: number): Promise<FileHandle> {
  let handle: FileHandle;
  try {
    handle = await open(path, flags | NONBLOCK, mode);
  } catch (error) {
    throw await explainOpenErrorAsync(path, error);
  }
  let kind: string | undefined;
  try {
    kind = kindOf(await handle.stat());
  } catch (error) {
    await handle.close();
    throw error;
  }
  if (kind === undefined) return handle;
  await handle.close();
  throw new StateFileError(notRegularText(path, kind));
}

/** 0 where the platform has no O_NONBLOCK (not Linux): there porter opens as it always did. */
const NONBLOCK = fs.constants.O_NONBLOCK ?? 0;

/** What a non-regular file is, in words; undefined for a regular file. */
function kindOf(stats: fs.Stats): string | undefined {
  if (stats.isFile()) return undefined;
  if (stats.isFIFO()) return 'a FIFO (named pipe)';
  if (stats.isSocket()) return 'a UNIX socket';
  if (stats.isCharacterDevice()) return 'a character device';
  if (stats.isBlockDevice()) return 'a block device';
  if (stats.isDirectory()) return 'a directory';
  return 'not a regular file';
}

function notRegularText(path: string, kind: string): string {
  return `state file ${path} is ${kind}, not a regular file: remove it; porter creates the file itself`;
}

/** What is at `path` when it is not a regular file (following links); undefined otherwise or when unreadable. */
function kindAt(path: string): string | undefined {
  try {
    const stats = fs.statSync(path, { throwIfNoEntry: false });
    return stats && kindOf(stats);
  } catch {
    // A link that loops or a path porter may not stat: the open that follows reports it.
    return undefined;
  }
}

/** A UNIX socket fails open with ENXIO, a FIFO without a reader too (for writing), a directory with EISDIR: name them. */
function explainOpenError(path: string, error: unknown): unknown {
  if ((error as NodeJS.ErrnoException).code === 'ENOENT') return error;
  const kind = kindAt(path);
  return kind === undefined ? error : new StateFileError(notRegularText(path, kind), { cause: error });
}

async function explainOpenErrorAsync(path: string, error: unknown): Promise<unknown> {
  if ((error as NodeJS.ErrnoException).code === 'ENOENT') return error;
  let kind: string | undefined;
  try {
    kind = kindOf(await stat(path));
  } catch {
    kind = undefined;
  }
  return kind === undefined ? error : new StateFileError(notRegularText(path, kind), { cause: error });
}
