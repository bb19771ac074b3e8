import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { BenchResult } from './figure.js';
import type { Machine } from './machine.js';
import { markdownTable, rowsOf } from './table.js';

/**
 * bench/results.json keeps the latest result of every benchmark, each with when, where and on
 * which commit it ran, so `--only drain` refreshes one benchmark without losing the others.
 */

export interface StoredResult extends BenchResult {
  readonly ranAt: string;
  readonly seconds: number;
  readonly commit: string;
  readonly machine: Machine;
  /** How busy other processes kept the machine just before the benchmark started (% of all cores). */
  readonly othersBusyPercent?: number;
  readonly error?: string;
}

interface ResultsFile {
  readonly about: string;
  readonly updatedAt: string;
  readonly benchmarks: Record<string, StoredResult>;
}

/** HEAD, marked "+dirty" when src/ has uncommitted changes: the figures belong to that code. */
export function currentCommit(cwd: string): string {
  const head = spawnSync('git', ['rev-parse', '--short', 'HEAD'], { cwd, encoding: 'utf8' });
  if (head.status !== 0) return 'unknown';
  const dirty = spawnSync('git', ['status', '--porcelain', '--', 'src'], { cwd, encoding: 'utf8' });
  return `${head.stdout.trim()}${dirty.stdout.trim() ? '+dirty' : ''}`;
}

export function readResults(path: string): ResultsFile | undefined {
  if (!existsSync(path)) return undefined;
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as ResultsFile;
  } catch {
    return undefined;
  }
}

export function mergeResults(previous: ResultsFile | undefined, fresh: readonly StoredResult[], order: readonly string[]): ResultsFile {
  const benchmarks: Record<string, StoredResult> = {};
  const merged = { ...previous?.benchmarks, ...Object.fromEntries(fresh.map((r) => [r.name, r])) };
  for (const name of order) if (merged[name]) benchmarks[name] = merged[name];
  return {
    about: 'Written by `npm run bench` (bench/run.ts); method and reading in docs/benchmarks.md.',
    updatedAt: new Date().toISOString(),
    benchmarks,
  };
}

export function writeJson(path: string, value: unknown): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, `${JSON.stringify(value, null, 2)}\n`);
}

const START = '<!-- bench:results:start -->';
const END = '<!-- bench:results:end -->';

/** Replaces the block between the markers in docs/benchmarks.md with the table of `results`. */
export function updateDocs(path: string, results: ResultsFile): boolean {
  if (!existsSync(path)) return false;
  const text = readFileSync(path, 'utf8');
  const start = text.indexOf(START);
  const end = text.indexOf(END);
  if (start === -1 || end < start) return false;
  const stored = Object.values(results.benchmarks);
  const machines = [
    ...new Set(
      stored.map(
        (r) =>
          `${r.machine.nproc} × ${r.machine.cpuModel}, ${r.machine.memoryGb} GB, Node ${r.machine.node}, ${r.machine.platform}, temp folders in ${r.machine.tmpdir ?? '?'}`,
      ),
    ),
  ];
  const commits = [...new Set(stored.map((r) => r.commit))];
  const dates = stored.map((r) => r.ranAt).sort();
  const block = [
    START,
    '',
    `Latest run: ${dates[0]?.slice(0, 16).replace('T', ' ')}${dates.length > 1 && dates.at(-1) !== dates[0] ? ` to ${dates.at(-1)!.slice(0, 16).replace('T', ' ')}` : ''} UTC, commit ${commits.join(', ')}.`,
    `Machine: ${machines.join('; ')}; CPU kept busy by other processes just before each benchmark: ${stored.map((r) => `${r.name} ${r.othersBusyPercent ?? '?'} %`).join(', ')}.`,
    '',
    markdownTable(rowsOf(stored.flatMap((r) => r.figures))),
    ...stored.filter((r) => r.error).map((r) => `\n${r.name} did not finish: ${r.error}`),
    '',
    END,
  ].join('\n');
  writeFileSync(path, text.slice(0, start) + block + text.slice(end + END.length));
  return true;
}
