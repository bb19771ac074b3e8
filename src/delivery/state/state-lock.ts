import { randomBytes } from 'node:crypto';
import { linkSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { acquireKernelLock, type KernelLock } from './kernel-lock.js';
import { currentHolder, describeHolder, formatHolder, parseHolder, staleReason, type LockHolder } from './lock-holder.js';
import { ConfigError } from '../../errors.js';
import { prepareStateDir } from './state-dir.js';
import { readStateFileSync } from './state-file.js';

export const LOCK_FILE = 'porter.lock';
const RECORD_WAIT_MS = 1000;

export interface LockOptions {
  /** Told when a lock left behind by a porter that is gone is taken over. */
  readonly logger?: { info(fields: Record<string, unknown>, message: string): void };
  /** The kernel-held lock; tests replace it to exercise the lock file on its own. */
  readonly kernelLock?: (stateDir: string) => Promise<KernelLock>;
}

/**
 * Two porter processes on one state directory would both report the same journal entries and
 * race each other's claims; the lock makes the second one refuse to start (exit 78).
 *
 * Two layers. The kernel lock (kernel-lock.ts) is exact and released by the kernel when porter
 * dies, so a reused pid can never keep porter out. The lock file `porter.lock` names the holder
 * (pid, process start time, boot id: lock-holder.ts) for messages, and decides alone where the
 * kernel lock does not reach (not Linux; another network namespace). A lock file whose holder is
 * gone is taken over with an info log naming it.
 *
 * Resolves with the function that releases both. The state directory is checked first
 * (state-dir.ts), so a bad one is a clear configuration error.
 */
export async function lockStateDir(stateDir: string, options: LockOptions = {}): Promise<() => void> {
  prepareStateDir(stateDir);
  const path = join(stateDir, LOCK_FILE);
  const kernel = await (options.kernelLock ?? acquireKernelLock)(stateDir);
  if (kernel.state === 'busy') throw inUse(stateDir, await recordedHolder(path));
  try {
    const me = formatHolder(currentHolder());
    writeLockFile(path, me, stateDir, options.logger);
    return () => {
      removeIfMine(path, me);
      if (kernel.state === 'held') kernel.release();
    };
  } catch (error) {
    if (kernel.state === 'held') kernel.release();
    throw error;
  }
}

interface Seen {
  readonly text: string;
  readonly holder: LockHolder | undefined;
  readonly writtenAtMs: number;
}

/**
 * Creates the lock file with `link()`, which fails when the name exists, so the file appears
 * whole or not at all. A stale one is moved aside with `rename()` first; when what moved is not
 * what was judged stale (another porter took it over in between and wrote its own), it is put
 * back, so of two porters that both saw the same stale lock only one ends up holding it.
 */
function writeLockFile(path: string, record: string, stateDir: string, logger: LockOptions['logger']): void {
  const temp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}`;
  writeFileSync(temp, record, { flag: 'wx', mode: 0o600 });
  try {
    for (let attempt = 0; attempt < 10; attempt++) {
      try {
        linkSync(temp, path);
        return;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
      const seen = read(path);
      if (seen === undefined) continue;
      const reason = seen.holder ? staleReason(seen.holder, seen.writtenAtMs) : 'it names no process (empty or damaged)';
      if (reason === undefined) throw inUse(stateDir, seen.holder);
      if (moveAside(path, seen.text)) {
        logger?.info(
          { event: 'state.lock.takeover', previousHolder: seen.holder ?? null, reason },
          `taking over the state directory lock left by ${seen.holder ? describeHolder(seen.holder) : 'an unknown process'}: ${reason}`,
        );
      }
    }
  } finally {
    unlinkSync(temp);
  }
  throw new ConfigError(
    `could not lock the state directory ${stateDir}: other processes keep replacing ${path}; stop them, or give this instance its own stateDir`,
  );
}

/** True when the stale record `judged` was removed; false when someone else had already replaced it. */
function moveAside(path: string, judged: string): boolean {
  const aside = `${path}.stale.${process.pid}.${randomBytes(4).toString('hex')}`;
  try {
    renameSync(path, aside);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
  try {
    if (readStateFileSync(aside).text === judged) return true;
    try {
      linkSync(aside, path);
    } catch (error) {
      // A third porter got in while it was aside: the next round judges that one.
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    return false;
  } finally {
    unlinkSync(aside);
  }
}

/** A lock file that is not a regular file (a FIFO would block the read forever) is a StateFileError, exit 78. */
function read(path: string): Seen | undefined {
  try {
    const { text, stats } = readStateFileSync(path);
    return { text, holder: parseHolder(text), writtenAtMs: stats.mtimeMs };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/**
 * The running holder the lock file names, for the message. A porter that has just taken the
 * kernel lock writes its record a moment later, so a refused porter waits a little for it.
 */
async function recordedHolder(path: string): Promise<LockHolder | undefined> {
  const deadline = Date.now() + RECORD_WAIT_MS;
  for (;;) {
    const seen = read(path);
    if (seen?.holder && staleReason(seen.holder, seen.writtenAtMs) === undefined) return seen.holder;
    if (Date.now() >= deadline) return undefined;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function inUse(stateDir: string, holder: LockHolder | undefined): ConfigError {
  const who = holder
    ? `is in use by another porter process (pid ${holder.pid})`
    : `is in use by another porter process (not named in ${LOCK_FILE}: it may be starting)`;
  return new ConfigError(`state directory ${stateDir} ${who}: stop it, or give this instance its own stateDir`);
}

/**
 * A successor that judged this process gone must not lose its lock to our late release. Best
 * effort: a lock file that cannot be removed now names a process that is about to be gone, and
 * the next start takes it over.
 */
function removeIfMine(path: string, record: string): void {
  try {
    if (readStateFileSync(path).text === record) unlinkSync(path);
  } catch {
    // best effort: see above
  }
}
