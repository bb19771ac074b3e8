import { randomBytes } from 'node:crypto';
import { closeSync, lstatSync, mkdirSync, openSync, readlinkSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { ConfigError, PorterError } from '../../errors.js';
import { checkStateFiles } from './state-file.js';

/**
 * The state directory cannot be used as configured (a file, a dangling symlink, no write access,
 * a read-only file system, a parent that cannot be created). Restarting cannot fix it, so exit 78;
 * the message names the path, what is wrong and what to do.
 */
export class StateDirError extends ConfigError {
  override readonly code = 'E_STATE_DIR';
}

/** The disk under the state directory is full: it may free up, so exit 1 and let the supervisor retry. */
export class StateDirFullError extends PorterError {
  override readonly code = 'E_STATE_DIR_FULL';
}

const CHOOSE = "or set stateDir to a directory porter's user can write";

/**
 * Makes `stateDir` a directory porter can write, creating it and missing parents (mode 0700), or
 * throws a StateDirError saying what is wrong. Runs once at start, before the journal opens, so a
 * bad state directory is a clear configuration error instead of a bare errno from deep inside.
 * Porter's own files in it that are not regular files (a FIFO, a socket, a device, a directory)
 * are a StateFileError (exit 78) for the same reason, and because opening a FIFO would hang.
 */
export function prepareStateDir(stateDir: string): void {
  const dir = resolve(stateDir);
  const found = inspect(dir);
  if (found === 'missing') create(dir);
  else if (found !== 'directory') throw new StateDirError(`stateDir ${dir} ${found}`);
  probeWrite(dir);
  checkStateFiles(dir);
}

/** 'directory', 'missing', or what is wrong with the entry at `path` (a sentence without the path). */
function inspect(path: string): string {
  let entry;
  try {
    entry = lstatSync(path);
  } catch (error) {
    // ENOTDIR: a parent is a file; the walk up in create() finds it and names it.
    if (errno(error) === 'ENOENT' || errno(error) === 'ENOTDIR') return 'missing';
    return `cannot be inspected (${errno(error)}): check the permissions of its parent folders`;
  }
  if (entry.isDirectory()) return 'directory';
  if (!entry.isSymbolicLink()) {
    return `is a file, not a directory: move the file away, ${CHOOSE}`;
  }
  const target = readlinkSync(path);
  try {
    if (statSync(path).isDirectory()) return 'directory';
    return `is a symbolic link to ${target}, which is not a directory: point the link at a directory, ${CHOOSE}`;
  } catch (error) {
    if (errno(error) === 'ELOOP') return `is a symbolic link that loops back on itself: fix the link, ${CHOOSE}`;
    return `is a symbolic link to ${target}, which does not exist (a dangling link): create ${resolve(dirname(path), target)} or fix the link, ${CHOOSE}`;
  }
}

/**
 * mkdir -p, one level at a time: Node's recursive mkdir loops forever under /proc (the parent
 * exists, the child can never be made), and a level-by-level walk can name the level that failed.
 */
function create(dir: string): void {
  const missing: string[] = [];
  let level = dir;
  for (;;) {
    const found = inspect(level);
    if (found === 'directory') break;
    if (found !== 'missing') throw new StateDirError(`stateDir ${dir} cannot be created: ${level} ${found}`);
    missing.unshift(level);
    if (dirname(level) === level) break;
    level = dirname(level);
  }
  for (const path of missing) {
    try {
      mkdirSync(path, { mode: 0o700 });
    } catch (error) {
      // Another porter (or the admin) made it in the meantime.
      if (errno(error) === 'EEXIST' && inspect(path) === 'directory') continue;
      throw new StateDirError(
        `stateDir ${dir} cannot be created: ${cannotWrite(dirname(path), error, `create ${path} yourself (mkdir -p ${dir}, owned by porter's user)`)}`,
      );
    }
  }
}

/** Creating a file is what the journal and the lock do; try it with a throwaway one. */
function probeWrite(dir: string): void {
  const probe = join(dir, `.porter-probe-${process.pid}-${randomBytes(4).toString('hex')}`);
  let fd: number;
  try {
    fd = openSync(probe, 'wx', 0o600);
  } catch (error) {
    if (isDiskFull(error)) throw fullError(dir, error);
    throw new StateDirError(
      `stateDir ${dir} is not usable: ${cannotWrite(dir, error, "give porter's user write access to it (chown or chmod)")}`,
    );
  }
  try {
    writeSync(fd, 'probe');
  } catch (error) {
    if (isDiskFull(error)) throw fullError(dir, error);
    throw new PorterError(`stateDir ${dir}: a test write failed (${errno(error)}): check the disk`);
  } finally {
    closeSync(fd);
    unlinkSync(probe);
  }
}

function cannotWrite(dir: string, error: unknown, fix: string): string {
  const code = errno(error);
  switch (code) {
    case 'EACCES':
    case 'EPERM':
      return `porter's user (uid ${process.getuid?.() ?? '?'}) may not create files in ${dir} (${code}): ${fix}, ${CHOOSE}`;
    case 'EROFS':
      return `${dir} is on a read-only file system (EROFS): remount it read-write, ${CHOOSE}`;
    default:
      return `cannot create files in ${dir} (${code}): ${fix}, ${CHOOSE}`;
  }
}

function isDiskFull(error: unknown): boolean {
  return errno(error) === 'ENOSPC' || errno(error) === 'EDQUOT';
}

function fullError(dir: string, error: unknown): StateDirFullError {
  return new StateDirFullError(
    `stateDir ${dir}: the disk is full (${errno(error)}): free some space; porter starts once it can write there`,
  );
}

function errno(error: unknown): string {
  return (error as NodeJS.ErrnoException | undefined)?.code ?? String(error);
}
