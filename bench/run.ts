import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { cpuMemory } from './figures/cpu-memory.js';
import { drain, drainShared } from './figures/drain.js';
import { fleet } from './figures/fleet.js';
import { push } from './figures/push.js';
import { idleMemory } from './figures/idle-memory.js';
import { idleLatency, joinLatency } from './figures/latency.js';
import { rcon } from './figures/rcon.js';
import { startup } from './figures/startup.js';
import { compareRounds, comparisonTable, prepareBuild, roundOrder } from './lib/against.js';
import type { Benchmark, BenchContext } from './lib/context.js';
import type { Figure } from './lib/figure.js';
import { THIS_BUILD, type PorterBuild } from './lib/porter-process.js';
import { busyWarning, machineBusyPercent } from './lib/load.js';
import { describeMachine } from './lib/machine.js';
import { currentCommit, mergeResults, readResults, updateDocs, writeJson, type StoredResult } from './lib/results.js';
import { rowsOf, textTable } from './lib/table.js';

/**
 * `npm run bench`: runs the real porter process against the fake Seller API and fake RCON server
 * and prints the figures next to their targets. Never part of `npm test`.
 *
 *   npm run bench                     every benchmark, several runs each (~8 min on 2 cores)
 *   npm run bench -- --quick          fewer runs and samples
 *   npm run bench -- --only drain,rcon
 *   npm run bench -- --keep           keep temp folders (configs, porter logs)
 *   npm run bench -- --profile        porter writes .cpuprofile files into the kept folders
 *   npm run bench -- --node-arg=--trace-gc   any node flag for porter (repeatable); output in porter.log
 *   npm run bench -- --against REF [--rounds N] [--only …]
 *                                     this tree against another commit, side by side in alternating
 *                                     rounds: each figure for both builds and their ratio (bench/lib/against.ts)
 *
 * A record run (with or without --only, but without --quick, --profile or --node-arg) updates
 * bench/results.json and the table in docs/benchmarks.md; the others write
 * dist/bench/results-quick.json. A missed target does not fail the run: the figures are measured, not
 * asserted. The exit code is 1 only when a benchmark could not run.
 */

/** In running order: quiet machine first for startup and RCON, the long CPU runs last. */
const BENCHMARKS: readonly Benchmark[] = [startup, rcon, drain, drainShared, idleLatency, joinLatency, idleMemory, cpuMemory, fleet, push];

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const RESULTS = fileURLToPath(new URL('../../bench/results.json', import.meta.url));
const QUICK_RESULTS = fileURLToPath(new URL('./results-quick.json', import.meta.url));
const AGAINST_RESULTS = fileURLToPath(new URL('./results-against.json', import.meta.url));
const DOCS = fileURLToPath(new URL('../../docs/benchmarks.md', import.meta.url));

const USAGE = `usage: npm run bench -- [--quick] [--only NAME[,NAME…]] [--keep] [--profile] [--node-arg=FLAG]… [--against REF [--rounds N]] [--list]
benchmarks: ${BENCHMARKS.map((b) => b.name).join(', ')}`;

interface Options {
  readonly quick: boolean;
  readonly keep: boolean;
  readonly profile: boolean;
  readonly nodeArgs: readonly string[];
  readonly only: readonly Benchmark[];
  readonly against: string | undefined;
  readonly rounds: number;
}

function parse(): Options | undefined {
  const { values } = parseArgs({
    options: {
      quick: { type: 'boolean', default: false },
      only: { type: 'string' },
      keep: { type: 'boolean', default: false },
      profile: { type: 'boolean', default: false },
      'node-arg': { type: 'string', multiple: true },
      against: { type: 'string' },
      rounds: { type: 'string' },
      list: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return undefined;
  }
  if (values.list) {
    for (const b of BENCHMARKS) process.stdout.write(`${b.name.padEnd(14)} ${b.description}\n`);
    return undefined;
  }
  const names = values.only
    ?.split(',')
    .map((n) => n.trim())
    .filter(Boolean);
  const unknown = names?.filter((n) => !BENCHMARKS.some((b) => b.name === n)) ?? [];
  if (unknown.length > 0)
    throw new Error(`unknown benchmark ${unknown.map((n) => `"${n}"`).join(', ')}: use one of ${BENCHMARKS.map((b) => b.name).join(', ')}`);
  const only = names ? BENCHMARKS.filter((b) => names.includes(b.name)) : [...BENCHMARKS];
  const nodeArgs = values['node-arg'] ?? [];
  // Odd, so that the median of the rounds' ratios is the middle one (a ratio a round measured, as every median here is).
  const rounds = values.rounds === undefined ? (values.quick ? 3 : 5) : Number(values.rounds);
  if (!Number.isInteger(rounds) || rounds < 1) throw new Error(`--rounds ${values.rounds}: a whole number of rounds, 1 or more`);
  const against = values.against;
  const measured = against === undefined ? only : only.filter((b) => b.runsPorter);
  if (measured.length === 0)
    throw new Error(
      `--against compares porter processes: choose from ${BENCHMARKS.filter((b) => b.runsPorter)
        .map((b) => b.name)
        .join(', ')}`,
    );
  return {
    quick: values.quick,
    keep: values.keep || values.profile || nodeArgs.length > 0,
    profile: values.profile,
    nodeArgs,
    only: measured,
    against,
    rounds,
  };
}

/** Consecutive side-by-side benchmarks form one group that runs at once; the others run alone. */
function groups(benchmarks: readonly Benchmark[]): Benchmark[][] {
  const out: Benchmark[][] = [];
  for (const b of benchmarks) {
    const last = out.at(-1);
    if (b.sideBySide && last?.[0]?.sideBySide) last.push(b);
    else out.push([b]);
  }
  return out;
}

async function main(): Promise<number> {
  let options: ReturnType<typeof parse>;
  try {
    options = parse();
  } catch (error) {
    process.stderr.write(`bench: ${(error as Error).message}\n${USAGE}\n`);
    return 2;
  }
  if (!options) return 0;
  const started = Date.now();
  const machine = describeMachine();
  const commit = currentCommit(ROOT);
  const elapsed = () => `${((Date.now() - started) / 1000).toFixed(0).padStart(4)} s`;
  const context: BenchContext = {
    quick: options.quick,
    keep: options.keep,
    profile: options.profile,
    porterNodeArgs: options.nodeArgs,
    build: THIS_BUILD,
    progress: (message) => process.stderr.write(`[${elapsed()}] ${message}\n`),
  };
  context.progress(
    `porter benchmarks${options.quick ? ' (quick)' : ''} on ${machine.nproc} × ${machine.cpuModel}, Node ${machine.node}, commit ${commit}`,
  );

  if (options.against !== undefined) {
    let other: PorterBuild;
    try {
      other = prepareBuild(options.against, ROOT, (message) => context.progress(message));
    } catch (error) {
      process.stderr.write(`bench: ${(error as Error).message}\n`);
      return 2;
    }
    return against(options, context, other, elapsed);
  }

  const results: StoredResult[] = [];
  for (const group of groups(options.only)) {
    context.progress(`${group.map((b) => b.name).join(' + ')}: ${group.map((b) => b.description).join('; ')}`);
    const othersBusy = await machineBusyPercent();
    const busy = busyWarning(othersBusy);
    if (busy) context.progress(`WARNING: ${busy}`);
    const settled = await Promise.all(
      group.map(async (benchmark): Promise<StoredResult> => {
        const t0 = Date.now();
        const stamp = { ranAt: new Date(t0).toISOString(), commit, machine };
        const finish = () => ({
          seconds: Math.round((Date.now() - t0) / 1000),
          ...(othersBusy === undefined ? {} : { othersBusyPercent: othersBusy }),
        });
        try {
          const result = await benchmark.run(context);
          return { ...result, ...stamp, ...finish() };
        } catch (error) {
          const message = (error as Error).message ?? String(error);
          context.progress(`${benchmark.name} FAILED: ${message}`);
          return { name: benchmark.name, figures: [], detail: {}, ...stamp, ...finish(), error: message };
        }
      }),
    );
    results.push(...settled);
  }

  process.stdout.write(`\n${textTable(rowsOf(results.flatMap((r) => r.figures)))}\n`);
  process.stdout.write(`\n${machine.nproc} × ${machine.cpuModel}, Node ${machine.node}, commit ${commit}; ${elapsed().trim()} in all\n`);
  const failed = results.filter((r) => r.error);
  for (const r of failed) process.stdout.write(`${r.name} did not finish: ${r.error}\n`);

  // Quick, profiled or otherwise instrumented figures are not the record.
  if (options.quick || options.profile || options.nodeArgs.length > 0) {
    writeJson(
      QUICK_RESULTS,
      mergeResults(
        undefined,
        results,
        BENCHMARKS.map((b) => b.name),
      ),
    );
    process.stdout.write(`not a record run: results in ${QUICK_RESULTS} (bench/results.json and docs/benchmarks.md untouched)\n`);
  } else {
    const merged = mergeResults(
      readResults(RESULTS),
      results,
      BENCHMARKS.map((b) => b.name),
    );
    writeJson(RESULTS, merged);
    const tables = [DOCS].filter((path) => updateDocs(path, merged)).map((path) => relative(ROOT, path));
    process.stdout.write(`results in bench/results.json${tables.length > 0 ? `; table updated in ${tables.join(' and ')}` : ''}\n`);
  }
  return failed.length > 0 ? 1 : 0;
}

/** Each benchmark on both builds, round after round, the first build alternating; then the ratios. */
async function against(
  options: NonNullable<ReturnType<typeof parse>>,
  context: BenchContext,
  other: PorterBuild,
  elapsed: () => string,
): Promise<number> {
  const rounds: Array<{ a: Figure[]; b: Figure[] }> = Array.from({ length: options.rounds }, () => ({ a: [], b: [] }));
  const failed: string[] = [];
  for (const group of groups(options.only)) {
    for (let round = 0; round < options.rounds; round++) {
      for (const build of roundOrder<PorterBuild>(round, THIS_BUILD, other)) {
        context.progress(`round ${round + 1}/${options.rounds}, ${build.label}: ${group.map((b) => b.name).join(' + ')}`);
        const busy = busyWarning(await machineBusyPercent());
        if (busy) context.progress(`WARNING: ${busy}`);
        const built = { ...context, build };
        const settled = await Promise.allSettled(group.map((benchmark) => benchmark.run(built)));
        for (const [i, outcome] of settled.entries()) {
          if (outcome.status === 'fulfilled') rounds[round]![build === THIS_BUILD ? 'a' : 'b'].push(...outcome.value.figures);
          else failed.push(`${group[i]!.name} on ${build.label}: ${(outcome.reason as Error).message}`);
        }
      }
    }
  }
  const comparison = compareRounds(rounds);
  process.stdout.write(`\n${comparisonTable(comparison, THIS_BUILD, other)}\n`);
  process.stdout.write(`\nratio: this tree ÷ ${other.label}, the median of the rounds' own ratios; ${elapsed().trim()} in all\n`);
  for (const line of failed) process.stdout.write(`did not finish: ${line}\n`);
  writeJson(AGAINST_RESULTS, { ranAt: new Date().toISOString(), against: other.label, rounds: options.rounds, comparison });
  process.stdout.write(`not a record run: results in ${AGAINST_RESULTS}\n`);
  return failed.length > 0 ? 1 : 0;
}

process.exitCode = await main();
