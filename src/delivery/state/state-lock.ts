import { randomBytes } from 'node:crypto';
import { linkSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { systemClock, type Clock } from '../../clock.js';
import { acquireKernelLock, type KernelLock } from './kernel-lock.js';
import { currentHolder, describeHolder, formatHolder, judgeHolder, parseHolder, type Judgement, type LockHolder } from './lock-holder.js';
import { ConfigError } from '../../errors.js';
import { prepareStateDir } from './state-dir.js';
import { readStateFileSync } from './state-file.js';
import { LEASE, StateLease, type LeaseTiming, type LostReason } from './state-lease.js';

export const LOCK_FILE = 'porter.lock';
const RECORD_WAIT_MS = 1000;

interface LockLogger {
  info(fields: Record<string, unknown>, message: string): void;
}

export interface LockOptions {
  /** Told when a lock left behind by a porter that is gone is taken over, and while one is watched. */
  readonly logger?: LockLogger;
  /** The kernel-held lock; tests replace it to exercise the lock file on its own. */
  readonly kernelLock?: (stateDir: string) => Promise<KernelLock>;
  /** Times the watch of a holder this process cannot see, and the lease's refreshes. */
  readonly clock?: Clock;
  readonly timing?: LeaseTiming;
  /** The lock file names another porter now: this one must stop at once (state-lease.ts). */
  readonly onLost?: (reason: LostReason) => void;
  /** A refresh of the lease failed: claims stop until one succeeds. */
  readonly onLeaseFailed?: (error: Error) => void;
}

/** The held lock: its lease (the delivery loops' gate) and the release. */
export interface StateLock {
  readonly lease: StateLease;
  readonly release: () => void;
}

/**
 * Two porter processes on one state directory would both report the same journal entries and
 * race each other's claims; the lock makes the second one refuse to start (exit 78). It holds
 * across network and pid namespaces and across hosts sharing the directory (docs/design.md#the-state-lock).
 *
 * Two layers. The kernel lock (kernel-lock.ts) is exact and released by the kernel when porter
 * dies, so a reused pid can never keep porter out; its scope is one network namespace. The lock
 * file `porter.lock` names the holder (lock-holder.ts) and decides alone where the kernel lock
 * does not reach. A holder this process can see (same boot, same pid namespace) is judged by its
 * pid and start time at once. One it cannot see (another container, another host) keeps a lease:
 * it rewrites its record every few seconds (state-lease.ts), and is taken over only when its
 * record did not change for a whole watch period. A takeover is logged naming the previous holder.
 *
 * Resolves with the held lock, its lease already kept. The state directory is checked first
 * (state-dir.ts), so a bad one is a clear configuration error.
 */
export async function lockStateDir(stateDir: string, options: LockOptions = {}): Promise<StateLock> {
  prepareStateDir(stateDir);
  const path = join(stateDir, LOCK_FILE);
  const clock = options.clock ?? systemClock;
  const timing = options.timing ?? LEASE;
  const kernel = await (options.kernelLock ?? acquireKernelLock)(stateDir);
  if (kernel.state === 'busy') throw inUse(stateDir, await recordedHolder(path));
  try {
    const holder = currentHolder(randomBytes(12).toString('hex'), Date.now());
    await writeLockFile(path, formatHolder(holder), stateDir, { ...options, clock, timing });
    const lease = new StateLease({
      path,
      holder,
      clock,
      timing,
      onLost: options.onLost ?? (() => {}),
      ...(options.onLeaseFailed && { onFailed: options.onLeaseFailed }),
    });
    lease.start();
    return {
      lease,
      release: () => {
        lease.stop();
        removeIfMine(path, formatHolder(lease.record));
        if (kernel.state === 'held') kernel.release();
      },
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
 * what was judged stale (another porter took it over in between and wrote its own, or the holder
 * refreshed it), it is put back, so of two porters that both saw the same stale lock only one ends
 * up holding it.
 */
async function writeLockFile(
  path: string,
  record: string,
  stateDir: string,
  options: LockOptions & { clock: Clock; timing: LeaseTiming },
): Promise<void> {
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
      const judged: Judgement = seen.holder
        ? judgeHolder(seen.holder, seen.writtenAtMs)
        : { verdict: 'stale', reason: 'it names no process (empty or damaged)' };
      let reason: string;
      if (judged.verdict === 'alive') throw inUse(stateDir, seen.holder);
      if (judged.verdict === 'unseen') {
        const changed = await watch(path, seen, judged.why, options);
        if (changed === 'gone') continue;
        if (changed !== undefined) throw inUse(stateDir, changed.holder ?? seen.holder, judged.why);
        reason = `its record did not change for ${options.timing.watchMs / 1000} s of watching: ${judged.why}, and it stopped refreshing its lease`;
      } else {
        reason = judged.reason;
      }
      if (moveAside(path, seen.text)) {
        options.logger?.info(
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

/**
 * Watches the record of a holder this process cannot see for one watch period, judging by change
 * alone (never by comparing clocks: the holder's may be another host's, or frozen). Resolves with
 * the record seen changed (the holder runs), 'gone' when the file went away, or undefined when it
 * did not change at all (the holder is gone, or frozen: a frozen holder checks its record before
 * it claims again, and stops).
 */
async function watch(
  path: string,
  seen: Seen,
  why: string,
  { clock, timing, logger }: { clock: Clock; timing: LeaseTiming; logger?: LockLogger | undefined },
): Promise<Seen | 'gone' | undefined> {
  logger?.info(
    { event: 'state.lock.watching', holder: seen.holder ?? null, watchMs: timing.watchMs },
    `${path} names ${seen.holder ? describeHolder(seen.holder) : 'a porter'}, which this porter cannot see (${why}): watching its lease for ${timing.watchMs / 1000} s before taking it over`,
  );
  const began = clock.now();
  const poll = Math.max(1, Math.floor(timing.refreshMs / 4));
  while (clock.now() - began < timing.watchMs) {
    await clock.sleep(poll);
    const now = read(path);
    if (now === undefined) return 'gone';
    if (now.text !== seen.text) return now;
  }
  return undefined;
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
    if (seen?.holder && judgeHolder(seen.holder, seen.writtenAtMs).verdict !== 'stale') return seen.holder;
    if (Date.now() >= deadline) return undefined;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** `unseen`: why this porter cannot see the holder, when it judged it alive by its lease. */
function inUse(stateDir: string, holder: LockHolder | undefined, unseen?: string): ConfigError {
  const file = join(stateDir, LOCK_FILE);
  const who = holder
    ? `is in use by another porter process (${describeHolder(holder)})`
    : `is in use by another porter process (not named in ${LOCK_FILE}: it may be starting)`;
  const how =
    unseen === undefined
      ? ''
      : `. It runs where this porter cannot see it (${unseen}), and its lease in ${file} changed while this porter watched, so it is alive: ` +
        `find it on host ${holder?.host ?? '(not recorded)'} (a container's host name is its container id; podman ps / docker ps / kubectl get pods on the machines that mount this volume), ` +
        `or watch the "lease" counter in ${file} advance every ${LEASE.refreshMs / 1000} s while it runs`;
  return new ConfigError(`state directory ${stateDir} ${who}: stop it, or give this instance its own stateDir${how}`);
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
