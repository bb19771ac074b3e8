import { readFileSync } from 'node:fs';
import { uptime } from 'node:os';

/**
 * Who holds the state directory lock, exactly: a pid alone is not enough, because after a reboot
 * (or a long run) the same pid belongs to another process. On Linux the record adds the process
 * start time (/proc/<pid>/stat field 22, clock ticks since boot) and the boot id, so a pid that
 * now names someone else is recognised as a lock left behind.
 */
export interface LockHolder {
  readonly pid: number;
  /** /proc/<pid>/stat starttime; absent where /proc is not readable. */
  readonly start?: string;
  /** /proc/sys/kernel/random/boot_id; absent where it is not readable (systemd ProcSubset=pid). */
  readonly boot?: string;
}

export function currentHolder(): LockHolder {
  const start = processStartTime(process.pid);
  const boot = bootId();
  return { pid: process.pid, ...(start !== undefined && { start }), ...(boot !== undefined && { boot }) };
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
  const { pid, start, boot } = value as Record<string, unknown>;
  if (typeof pid !== 'number' || !validPid(pid)) return undefined;
  return { pid, ...(typeof start === 'string' && { start }), ...(typeof boot === 'string' && { boot }) };
}

export function describeHolder(holder: LockHolder): string {
  return `pid ${holder.pid}${holder.start !== undefined ? `, started at tick ${holder.start}` : ''}${holder.boot !== undefined ? `, boot ${holder.boot}` : ''}`;
}

/**
 * Why the lock of `holder` is left behind, or undefined when that process is still running.
 * `writtenAtMs` is the lock file's modification time, used only for records of older porters.
 */
export function staleReason(holder: LockHolder, writtenAtMs: number): string | undefined {
  const boot = bootId();
  if (holder.boot !== undefined && boot !== undefined && holder.boot !== boot) return 'it was written before the machine restarted';
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
  if (holder.pid === process.pid) return 'it names this very process';
  if (writtenAtMs < Date.now() - uptime() * 1000) return 'it was written before the machine restarted';
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
