import { readFileSync, readlinkSync } from 'node:fs';
import { hostname, uptime } from 'node:os';

/**
 * Who holds the state directory lock, exactly: a pid alone is not enough, because after a reboot
 * (or a long run) the same pid belongs to another process, and in another pid namespace (another
 * container on the same volume) or on another host (a volume on NFS) the pid names nothing this
 * process can see. On Linux the record adds the process start time (/proc/<pid>/stat field 22,
 * clock ticks since boot), the boot id and the pid namespace, so a porter can tell whether it can
 * see the holder at all; a random nonce per run and a lease counter the holder advances every few
 * seconds (state-lease.ts) let one that cannot see it tell a live holder from a dead one by watching
 * the record change. The host name and the time of the last refresh are for messages only.
 */
export interface LockHolder {
  readonly pid: number;
  /** /proc/<pid>/stat starttime; absent where /proc is not readable. */
  readonly start?: string;
  /** /proc/sys/kernel/random/boot_id; absent where it is not readable (systemd ProcSubset=pid). */
  readonly boot?: string;
  /** readlink /proc/self/ns/pid, e.g. `pid:[4026531836]`: the pid namespace the pid is counted in. */
  readonly pidns?: string;
  /** The holder's host name (a container's is its own): for messages. */
  readonly host?: string;
  /** Random per run: tells this run's record from any other's, whatever the pid. */
  readonly nonce?: string;
  /** Advanced by every refresh: a record that changes is a holder that runs. */
  readonly lease?: number;
  /** Wall-clock ms of the last refresh, by the holder's clock: for messages, never compared. */
  readonly at?: number;
}

/** What this process knows of where it runs, to judge whether it can see a holder. */
export interface Here {
  readonly pid: number;
  readonly boot: string | undefined;
  readonly pidns: string | undefined;
  readonly host: string;
  /** Wall-clock ms at which this machine booted (by this machine's clock). */
  readonly bootedAtMs: number;
}

export function here(): Here {
  return { pid: process.pid, boot: bootId(), pidns: pidNamespace(), host: hostname(), bootedAtMs: Date.now() - uptime() * 1000 };
}

export function currentHolder(nonce?: string, now = Date.now()): LockHolder {
  const start = processStartTime(process.pid);
  const boot = bootId();
  const pidns = pidNamespace();
  return {
    pid: process.pid,
    ...(start !== undefined && { start }),
    ...(boot !== undefined && { boot }),
    ...(pidns !== undefined && { pidns }),
    host: hostname(),
    ...(nonce !== undefined && { nonce, lease: 0, at: now }),
  };
}

/** The record of the next refresh: the counter advanced, the time stamped. */
export function renewed(holder: LockHolder, now: number): LockHolder {
  return { ...holder, lease: (holder.lease ?? 0) + 1, at: now };
}

/** The record as written into porter.lock: one JSON line. */
export function formatHolder(holder: LockHolder): string {
  return `${JSON.stringify(holder)}\n`;
}

/**
 * The holder a lock file names, or undefined when it names none (empty, damaged). A file of a
 * bare number is a lock written by an older porter, before start times were recorded.
 */
export function parseHolder(text: string): LockHolder | undefined {
  const trimmed = text.trim();
  if (/^\d+$/.test(trimmed)) return validPid(Number(trimmed)) ? { pid: Number(trimmed) } : undefined;
  let value: unknown;
  try {
    value = JSON.parse(trimmed);
  } catch {
    return undefined;
  }
  if (!value || typeof value !== 'object') return undefined;
  const { pid, start, boot, pidns, host, nonce, lease, at } = value as Record<string, unknown>;
  if (typeof pid !== 'number' || !validPid(pid)) return undefined;
  return {
    pid,
    ...(typeof start === 'string' && { start }),
    ...(typeof boot === 'string' && { boot }),
    ...(typeof pidns === 'string' && { pidns }),
    ...(typeof host === 'string' && { host }),
    ...(typeof nonce === 'string' && { nonce }),
    ...(typeof lease === 'number' && Number.isSafeInteger(lease) && { lease }),
    ...(typeof at === 'number' && Number.isFinite(at) && { at }),
  };
}

export function describeHolder(holder: LockHolder): string {
  const parts = [`pid ${holder.pid}`];
  if (holder.host !== undefined) parts.push(`on host ${holder.host}`);
  if (holder.pidns !== undefined) parts.push(`in pid namespace ${holder.pidns}`);
  if (holder.at !== undefined) parts.push(`lease ${holder.lease ?? 0} refreshed at ${new Date(holder.at).toISOString()} by its clock`);
  else {
    if (holder.start !== undefined) parts.push(`started at tick ${holder.start}`);
    if (holder.boot !== undefined) parts.push(`boot ${holder.boot}`);
  }
  return parts.join(', ');
}

/**
 * What this process can tell of the holder a record names:
 * - `stale`: it is gone (the reason says how this process knows);
 * - `alive`: it runs, and this process sees it (same boot, same pid namespace);
 * - `unseen`: it runs where this process cannot look (another pid namespace: another container;
 *   another boot id: another host), so only its lease can tell: the caller watches the record.
 * `writtenAtMs` is the lock file's modification time (the file system's clock).
 */
export type Judgement =
  | { readonly verdict: 'stale'; readonly reason: string }
  | { readonly verdict: 'alive' }
  | { readonly verdict: 'unseen'; readonly why: string };

export function judgeHolder(holder: LockHolder, writtenAtMs: number, where: Here = here()): Judgement {
  // A record of this porter's (it keeps a lease) written where this process cannot look.
  if (holder.nonce !== undefined) {
    if (holder.boot !== undefined && where.boot !== undefined && holder.boot !== where.boot) {
      // Same host name and older than this boot: the machine restarted since, and a live holder
      // on another machine would have refreshed the file within seconds of now.
      if (holder.host === where.host && writtenAtMs < where.bootedAtMs) {
        return { verdict: 'stale', reason: 'it was written before this machine restarted' };
      }
      return { verdict: 'unseen', why: 'it runs on another machine (another boot id), or did before this one restarted' };
    }
    if (holder.pidns !== undefined && where.pidns !== undefined && holder.pidns !== where.pidns) {
      return { verdict: 'unseen', why: 'it runs in another pid namespace (another container on the same volume)' };
    }
  }
  const reason = staleReason(holder, writtenAtMs, where);
  return reason === undefined ? { verdict: 'alive' } : { verdict: 'stale', reason };
}

/**
 * Why the lock of a holder this process can see is left behind, or undefined when that process is
 * still running. `writtenAtMs` is used only for records of older porters (a bare pid).
 */
function staleReason(holder: LockHolder, writtenAtMs: number, where: Here): string | undefined {
  if (holder.boot !== undefined && where.boot !== undefined && holder.boot !== where.boot)
    return 'it was written before the machine restarted';
  if (!isAlive(holder.pid)) return `process ${holder.pid} no longer exists`;
  if (holder.start !== undefined) {
    const start = processStartTime(holder.pid);
    // Unreadable while alive: /proc hides other users' processes (ProtectProc=invisible), so it is not porter's user's process.
    if (start === undefined) return `process ${holder.pid} is not one of this user's processes`;
    if (start !== holder.start)
      return `pid ${holder.pid} now belongs to another process (it started at tick ${start}, the holder at ${holder.start})`;
    return undefined;
  }
  // A bare pid (an older porter, or no /proc): it cannot outlive a reboot, and it cannot be our own.
  if (holder.pid === where.pid) return 'it names this very process';
  if (writtenAtMs < where.bootedAtMs) return 'it was written before the machine restarted';
  return undefined;
}

function validPid(pid: number): boolean {
  return Number.isSafeInteger(pid) && pid > 0;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Field 22 of /proc/<pid>/stat. The command name (field 2) may hold spaces and ")", so count from its last ")". */
export function processStartTime(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const afterName = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return afterName[22 - 3];
  } catch {
    return undefined;
  }
}

function bootId(): string | undefined {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}

function pidNamespace(): string | undefined {
  try {
    return readlinkSync('/proc/self/ns/pid');
  } catch {
    return undefined;
  }
}
