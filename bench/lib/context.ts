import type { PorterBuild } from './porter-process.js';

/** What every benchmark gets from the runner. */
export interface BenchContext {
  /** `--quick`: fewer runs and samples, for a look rather than a record. */
  readonly quick: boolean;
  /** Progress lines on stderr, so stdout stays the table. */
  progress(message: string): void;
  /** `--keep`: leave temp folders (configs, porter logs) for a post-mortem. */
  readonly keep: boolean;
  /** `--profile`: every porter process writes a .cpuprofile into its (kept) temp folder. */
  readonly profile: boolean;
  /** `--node-arg FLAG` (repeatable): more node flags for every porter process. */
  readonly porterNodeArgs: readonly string[];
  /** The build of porter to measure: this tree's, or in an `--against` round the other one. */
  readonly build: PorterBuild;
}

/** How every benchmark starts porter: the context's build, profile and node flags. */
export function porterOptions(context: BenchContext): { profile: boolean; nodeArgs: readonly string[]; build: PorterBuild } {
  return { profile: context.profile, nodeArgs: context.porterNodeArgs, build: context.build };
}

export interface Benchmark {
  readonly name: string;
  readonly description: string;
  /**
   * Porter mostly idles in this benchmark, so it may run at the same time as the other such
   * benchmarks without either disturbing the other's figures.
   */
  readonly sideBySide?: boolean;
  /** It measures a porter process (started with porterOptions), so `--against` can run it on another build. */
  readonly runsPorter?: boolean;
  run(context: BenchContext): Promise<import('./figure.js').BenchResult>;
}
