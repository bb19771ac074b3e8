import type fc from 'fast-check';

/**
 * Options for every property test: seeded, so a run is replayable. fast-check prints the seed
 * and the shrunk counter-example on failure; `PORTER_FC_SEED=<seed>` replays it, and
 * `PORTER_FC_RUNS=<n>` multiplies the runs for a longer hunt (the default keeps `npm test` quick).
 */
export function fcOptions<T>(options: { numRuns: number }): fc.Parameters<T> {
  const seed = process.env.PORTER_FC_SEED === undefined ? 0x5eed : Number(process.env.PORTER_FC_SEED);
  const scale = process.env.PORTER_FC_RUNS === undefined ? 1 : Number(process.env.PORTER_FC_RUNS);
  return { seed, numRuns: Math.max(1, Math.round(options.numRuns * scale)), includeErrorInReport: true };
}
