import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/**
 * Reads another process's CPU time and resident memory from /proc (Linux only), so the figures
 * belong to the porter process alone and not to the harness that drives it.
 */

let ticksPerSecond: number | undefined;

/** USER_HZ: the unit of utime/stime in /proc/<pid>/stat (100 on virtually every Linux). */
function clockTicksPerSecond(): number {
  if (ticksPerSecond === undefined) {
    const answer = spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' });
    const parsed = Number.parseInt(answer.stdout ?? '', 10);
    ticksPerSecond = Number.isFinite(parsed) && parsed > 0 ? parsed : 100;
  }
  return ticksPerSecond;
}

/** user + system CPU time of `pid` in milliseconds (resolution: one clock tick, usually 10 ms). */
export function cpuMs(pid: number): number {
  const { user, system } = cpuTimes(pid);
  return user + system;
}

/** User and system CPU time of `pid` in milliseconds. */
export function cpuTimes(pid: number): { user: number; system: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name (field 2) is in parentheses and may itself contain spaces or parentheses.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // fields[0] is field 3 (state); utime and stime are fields 14 and 15.
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  if (!Number.isFinite(utime) || !Number.isFinite(stime)) {
    throw new Error(`could not read utime/stime from /proc/${pid}/stat: is this Linux and is the process alive?`);
  }
  const tick = 1000 / clockTicksPerSecond();
  return { user: utime * tick, system: stime * tick };
}

/** Resident set size of `pid` in kB (VmRSS of /proc/<pid>/status). */
export function rssKb(pid: number): number {
  return statusKb(pid, 'VmRSS');
}

/** The most `pid` has held resident since it started, in kB (VmHWM): what a memory limit must allow. */
export function peakRssKb(pid: number): number {
  return statusKb(pid, 'VmHWM');
}

function statusKb(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const match = new RegExp(`^${field}:\\s+(\\d+)\\s+kB$`, 'm').exec(status);
  if (!match) throw new Error(`no ${field} in /proc/${pid}/status: is this Linux and is the process alive?`);
  return Number(match[1]);
}
