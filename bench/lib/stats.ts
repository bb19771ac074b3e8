/** Small, dependency-free statistics for the benchmark figures. */

export function median(values: readonly number[]): number {
  return percentile(values, 50);
}

/**
 * Nearest-rank percentile: the smallest sample that at least p % of the samples are ≤ to. No
 * interpolation, so a reported p99 is a latency that really happened.
 */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[Math.min(sorted.length, rank) - 1]!;
}

export function round(value: number, digits = 0): number {
  if (!Number.isFinite(value)) return value;
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}

/** Uniform random number in [min, max). */
export function uniform(min: number, max: number, random: () => number = Math.random): number {
  return min + (max - min) * random();
}

/** Exponentially distributed with the given mean: the gaps of a Poisson process. */
export function exponential(mean: number, random: () => number = Math.random): number {
  return -mean * Math.log(1 - random());
}
