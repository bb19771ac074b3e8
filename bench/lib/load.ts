import { availableParallelism, loadavg } from 'node:os';

/**
 * Other work on the machine (a test suite, a build) skews every timing here, most of all on two
 * cores. The harness cannot stop it, but it can say so: the 1-minute load average is recorded with
 * each benchmark, and a run that starts on a busy machine is flagged.
 */
export function loadAverage(): number {
  return Math.round(loadavg()[0]! * 100) / 100;
}

/** A load above half the cores, before porter adds its own, means someone else is busy. */
export function busyMachine(): string | undefined {
  const load = loadAverage();
  const cores = availableParallelism();
  return load > cores / 2 ? `the machine is busy (1-minute load average ${load} on ${cores} cores): timings will be noisy` : undefined;
}
