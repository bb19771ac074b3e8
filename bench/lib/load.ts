import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';

/**
 * Other work on the machine (a test suite, a build) skews every timing here, most of all on two
 * cores. The harness cannot stop it, but it can say so. Between benchmarks the harness and its
 * children are idle, so the CPU time the whole machine spends in a short sample then is someone
 * else's. (The load average would not do: it trails by a minute and counts our own last run.)
 */

function cpuTotals(): { busy: number; total: number } {
  const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!;
  const values = line.trim().split(/\s+/).slice(1).map(Number);
  // user nice system idle iowait irq softirq steal …: idle and iowait are not busy.
  const total = values.slice(0, 8).reduce((sum, v) => sum + v, 0);
  const idle = (values[3] ?? 0) + (values[4] ?? 0);
  return { busy: total - idle, total };
}

/** Percent of all cores busy over `ms` (100 = every core fully busy); undefined off Linux. */
export async function machineBusyPercent(ms = 1000): Promise<number | undefined> {
  try {
    const before = cpuTotals();
    await new Promise((resolve) => setTimeout(resolve, ms));
    const after = cpuTotals();
    const total = after.total - before.total;
    return total > 0 ? Math.round(((after.busy - before.busy) / total) * 100) : undefined;
  } catch {
    return undefined;
  }
}

/** A warning when others keep more than a fifth of the machine busy. */
export function busyWarning(percent: number | undefined): string | undefined {
  if (percent === undefined || percent <= 20) return undefined;
  return `other processes keep ${percent} % of the ${availableParallelism()} cores busy: timings will be noisy`;
}
