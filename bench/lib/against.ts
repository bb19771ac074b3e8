import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Figure } from './figure.js';
import { porterBuild, type PorterBuild } from './porter-process.js';
import { median, round } from './stats.js';

/**
 * `npm run bench -- --against REF`: the same benchmarks on this tree and on another commit, in
 * alternating rounds of one session, so that each figure is read as a ratio between two builds
 * measured side by side (absolute figures on a shared machine move by more than the changes they
 * are meant to judge).
 */

const run = (file: string, args: readonly string[], cwd: string) =>
  execFileSync(file, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();

/**
 * The other build, made once per commit in a scratch worktree under the temp folder (kept, so the
 * next comparison with it starts at once): `npm ci` without scripts, then that commit's own build.
 */
export function prepareBuild(ref: string, root: string, progress: (message: string) => void): PorterBuild {
  let sha: string;
  try {
    sha = run('git', ['rev-parse', '--verify', `${ref}^{commit}`], root);
  } catch {
    throw new Error(`--against ${ref}: git knows no such commit here (a branch, a tag or a commit of this repository)`);
  }
  const dir = join(tmpdir(), `porter-bench-${sha.slice(0, 12)}`);
  const label = `${ref} (${sha.slice(0, 7)})`;
  const built = join(dir, '.porter-bench-built');
  if (!existsSync(built)) {
    progress(`--against: building ${label} in ${dir} (npm ci and its build: a minute or two, once)`);
    if (existsSync(dir)) {
      execFileSync('git', ['worktree', 'remove', '--force', dir], { cwd: root, stdio: 'ignore' });
      rmSync(dir, { recursive: true, force: true });
    }
    execFileSync('git', ['worktree', 'prune'], { cwd: root, stdio: 'ignore' });
    execFileSync('git', ['worktree', 'add', '--detach', dir, sha], { cwd: root, stdio: 'ignore' });
    execFileSync('npm', ['ci', '--ignore-scripts', '--no-audit', '--no-fund'], { cwd: dir, stdio: ['ignore', 'ignore', 'inherit'] });
    execFileSync('npm', ['run', 'build'], { cwd: dir, stdio: ['ignore', 'ignore', 'inherit'] });
    execFileSync('touch', [built]);
  }
  const { bin } = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { bin: { porter: string } };
  return porterBuild(label, join(dir, bin.porter));
}

/** Which build goes first in each round: alternating, so that neither always has the warmer machine. */
export function roundOrder<T>(round: number, a: T, b: T): [T, T] {
  return round % 2 === 0 ? [a, b] : [b, a];
}

interface Comparison {
  readonly key: string;
  readonly label: string;
  readonly unit: string;
  /** The median of this tree's per-round figures, and of the other build's. */
  readonly a: number;
  readonly b: number;
  /** The median of the per-round ratios a ÷ b, and their smallest and largest. */
  readonly ratio: number;
  readonly spread: readonly [number, number];
  readonly rounds: number;
}

/**
 * Per figure: each round's value for both builds, their ratio in that round, and the median and
 * spread of those ratios. A round's ratio, not the ratio of medians, so that what the machine did
 * during one round (another tenant's load) touches both builds of that round alike.
 */
export function compareRounds(rounds: ReadonlyArray<{ readonly a: readonly Figure[]; readonly b: readonly Figure[] }>): Comparison[] {
  const keys = [...new Set(rounds.flatMap((r) => r.a.map((f) => f.key)))];
  return keys.flatMap((key) => {
    const pairs = rounds.flatMap((r) => {
      const a = r.a.find((f) => f.key === key);
      const b = r.b.find((f) => f.key === key);
      return a && b && Number.isFinite(a.value) && Number.isFinite(b.value) ? [{ a, b }] : [];
    });
    if (pairs.length === 0) return [];
    const ratios = pairs.filter((p) => p.b.value !== 0).map((p) => p.a.value / p.b.value);
    const first = pairs[0]!.a;
    return [
      {
        key,
        label: first.label,
        unit: first.unit,
        a: median(pairs.map((p) => p.a.value)),
        b: median(pairs.map((p) => p.b.value)),
        ratio: ratios.length > 0 ? median(ratios) : Number.NaN,
        spread: ratios.length > 0 ? [Math.min(...ratios), Math.max(...ratios)] : [Number.NaN, Number.NaN],
        rounds: pairs.length,
      },
    ];
  });
}

/** The comparison as a plain-text table: figure, both builds, the ratio and its spread. */
export function comparisonTable(rows: readonly Comparison[], a: PorterBuild, b: PorterBuild): string {
  const num = (value: number, unit: string) => (Number.isFinite(value) ? `${round(value, value < 10 ? 3 : 1)} ${unit}` : 'n/a');
  const lines = [
    ['figure', a.label, b.label, 'ratio', 'spread of the rounds'],
    ...rows.map((r) => [
      r.label,
      num(r.a, r.unit),
      num(r.b, r.unit),
      Number.isFinite(r.ratio) ? r.ratio.toFixed(3) : 'n/a',
      `${r.spread[0].toFixed(3)}–${r.spread[1].toFixed(3)} (${r.rounds} rounds)`,
    ]),
  ];
  const widths = lines[0]!.map((_, i) => Math.max(...lines.map((l) => l[i]!.length)));
  return lines
    .map((l) =>
      l
        .map((cell, i) => cell.padEnd(widths[i]!))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}
