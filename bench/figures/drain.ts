import { figure, type BenchResult } from '../lib/figure.js';
import { type Budget, releaseFixture, startFixture } from '../lib/fixture.js';
import { startPorter, type PorterProcess } from '../lib/porter-process.js';
import { RequestTally } from '../lib/requests.js';
import { median, round } from '../lib/stats.js';
import { until } from '../lib/wait.js';
import { porterOptions, type Benchmark, type BenchContext } from '../lib/context.js';

/**
 * Drain efficiency: N commands due at once, the same shrunk window in the fake and in porter's
 * config. The pull route allows P calls per window of W ms and every claim needs a pull, so claim
 * number k rides on pull number ≥ k, which falls in window ⌈k/P⌉; that window cannot open before
 * (⌈k/P⌉ − 1)·W after the first pull (the fake opens a window at the first request after the last
 * one ended, never earlier). Hence the theoretical minimum, from the first pull to the last claim:
 *
 *     T_min = (⌈N/P⌉ − 1) · W
 *
 * The final empty pull (the one that would find the queue empty) is not counted on either side:
 * it delivers nothing and porter need not make it for the backlog to be delivered. For N = 300,
 * P = 120 the last claim is the 60th of the third window, so the measured time also holds porter's
 * own time for those 60 deliveries; that is part of what efficiency charges it with.
 *
 * Sharing, two ways another client (the official connector) spends 40 pull calls per window:
 * - burst: all 40 the moment each of the fake's windows opens (the harness replays the fake's
 *   window rule on its request log and calls `spend`). That leaves porter P − 40 per window, so
 *   T_min = (⌈N/(P − 40)⌉ − 1) · W, and porter learns it from X-RateLimit-Remaining at once.
 * - steady: one call every W/40 ms, opening windows itself like a real client. Porter empties each
 *   window while the other client is still spending, so a 429 can happen whenever one of those
 *   calls lands between porter's last answer and its next call.
 * - late: the other client's 40 land when porter has used P − 20 of a window, so porter's view
 *   (20 left) is wrong and its next pull meets a 429 in every window, whose Retry-After it must
 *   honour. The adversarial case: the one that makes "0 Retry-After violations" mean something.
 * For steady and late only 429s and Retry-After violations are figures (no clean T_min).
 */

type OtherClient = 'none' | 'burst' | 'steady' | 'late';
/** late: how many calls porter has left in the window when the other client strikes. */
const LATE_LEFT = 20;

const DRAIN_BUDGET: Budget = { perWindow: 120, windowMs: 6_000 };
const DRAIN_COMMANDS = 300;
const OTHER_PER_WINDOW = 40;

interface DrainRun {
  readonly measuredMs: number;
  /** Null when the other client's share has no clean bound (steady, late). */
  readonly idealMs: number | null;
  readonly efficiency: number | null;
  readonly tooMany: number;
  readonly retryAfterViolations: number;
  readonly pulls: number;
  /** Per fake window: when it opened (ms after the first pull), the ideal opening, claims made in it. */
  readonly windows: ReadonlyArray<{ openedAtMs: number; idealAtMs: number; claims: number; porterPulls: number; lastClaimAtMs: number }>;
  readonly doneMs: number;
  /** Where the time above T_min went: windows opening after k·W, and porter's own time in the last one. */
  readonly lostMs: { readonly windowsOpenedLate: number; readonly lastWindowWork: number };
  /**
   * The rolling rule's own minimum (alone only): claim k + P cannot come before windowMs after claim
   * k, so the last claim cannot come before claim N − (⌈N/P⌉ − 1)·P plus (⌈N/P⌉ − 1)·W. The part above
   * T_min is porter's own time for those first claims, paid again in every window.
   */
  readonly rollingIdealMs: number | null;
}

async function drainOnce(context: BenchContext, other: OtherClient): Promise<DrainRun> {
  const otherPerWindow = other === 'none' ? 0 : OTHER_PER_WINDOW;
  const { perWindow: P, windowMs: W } = DRAIN_BUDGET;
  const N = DRAIN_COMMANDS;
  const fixture = await startFixture({ budget: DRAIN_BUDGET });
  let porter: PorterProcess | undefined;
  try {
    for (let i = 0; i < N; i++) fixture.api.enqueue(fixture.serverId, { command: `say drain ${i}`, offlineExecute: true });
    const tally = new RequestTally(fixture.api);
    // The fake's pull windows, replayed from its request log with the fake's own rule.
    const windows: Array<{ start: number; claims: number; pulls: number; lastClaimAt: number; struck: boolean }> = [];
    tally.onRequest((request) => {
      if (request.route !== 'pull') return;
      let current = windows.at(-1);
      if (!current || request.at >= current.start + W) {
        current = { start: request.at, claims: 0, pulls: 0, lastClaimAt: request.at, struck: false };
        windows.push(current);
        if (other === 'burst') fixture.api.spend(fixture.serverId, 'pull', otherPerWindow);
      }
      current.pulls++;
      if (other === 'late' && !current.struck && current.pulls >= P - LATE_LEFT) {
        current.struck = true;
        fixture.api.spend(fixture.serverId, 'pull', otherPerWindow);
      }
      if (request.status === 200) {
        current.claims++;
        current.lastClaimAt = request.at;
      }
    });
    porter = startPorter(fixture.configPath, fixture.dir, porterOptions(context));
    const p = porter;
    // The steady client starts with porter: its calls open windows too, as real requests would.
    const steady = other === 'steady' ? setInterval(() => fixture.api.spend(fixture.serverId, 'pull', 1), W / OTHER_PER_WINDOW) : undefined;
    const share = P - otherPerWindow;
    const idealMs = (Math.ceil(N / share) - 1) * W;
    try {
      await until(() => tally.update().doneOk >= N, `${N} deliveries`, {
        timeoutMs: idealMs + 8 * W + 20_000,
        intervalMs: 1,
        onTimeout: () => p.tail(),
      });
    } finally {
      clearInterval(steady);
    }
    const commands = fixture.api.commands();
    const doubleClaims = commands.filter((c) => c.claims > 1).length;
    if (doubleClaims > 0) throw new Error(`benchmark: ${doubleClaims} commands were claimed twice: porter is broken, figures are void`);
    const t0 = tally.firstPullAt!;
    const lastClaim = Math.max(...commands.map((c) => c.claimedAt ?? Number.NEGATIVE_INFINITY));
    const lastDone = Math.max(...commands.flatMap((c) => c.reports.map((r) => r.at)));
    const measuredMs = lastClaim - t0;
    const claimTimes = commands.map((c) => c.claimedAt ?? Number.POSITIVE_INFINITY).sort((a, b) => a - b);
    const laterWindows = Math.ceil(N / P) - 1;
    const rollingIdealMs = other === 'none' ? claimTimes[N - laterWindows * P - 1]! - t0 + laterWindows * W : null;
    const bounded = other === 'none' || other === 'burst';
    const run: DrainRun = {
      measuredMs,
      idealMs: bounded ? idealMs : null,
      efficiency: bounded ? idealMs / measuredMs : null,
      tooMany: tally.tooMany,
      retryAfterViolations: fixture.api.retryAfterViolations,
      pulls: tally.pulls,
      windows: windows.map((w, i) => ({
        openedAtMs: w.start - t0,
        idealAtMs: i * W,
        claims: w.claims,
        porterPulls: w.pulls,
        lastClaimAtMs: w.lastClaimAt - t0,
      })),
      doneMs: lastDone - t0,
      lostMs: {
        windowsOpenedLate: windows.length > 0 ? windows.at(-1)!.start - t0 - (windows.length - 1) * W : 0,
        lastWindowWork: windows.length > 0 ? lastClaim - windows.at(-1)!.start : 0,
      },
      rollingIdealMs,
    };
    context.progress(
      `  ${other === 'none' ? 'alone' : `sharing (${other})`}: last claim ${measuredMs} ms after the first pull${bounded ? ` (ideal ${idealMs}), efficiency ${round(run.efficiency!, 3)}` : ''}, ${run.tooMany} × 429, ${run.retryAfterViolations} Retry-After violations; last window opened ${run.lostMs.windowsOpenedLate} ms late, porter's own time in it ${run.lostMs.lastWindowWork} ms${rollingIdealMs === null ? '' : `; the rolling rule's minimum ${rollingIdealMs} ms`}`,
    );
    return run;
  } finally {
    await porter?.stop();
    await releaseFixture(fixture, context);
  }
}

function runsFor(context: BenchContext): number {
  return context.quick ? 1 : 3;
}

export const drain: Benchmark = {
  name: 'drain',
  runsPorter: true,
  description: `backlog of ${DRAIN_COMMANDS} at ${DRAIN_BUDGET.perWindow} pulls / ${DRAIN_BUDGET.windowMs / 1000} s: theoretical minimum ÷ measured, 429s`,
  async run(context) {
    const runs: DrainRun[] = [];
    for (let i = 0; i < runsFor(context); i++) runs.push(await drainOnce(context, 'none'));
    return {
      name: this.name,
      figures: [
        // No target of its own: the rolling rule cannot reach T_min (see rollingIdealMs), and
        // what it can reach is the next figure's. docs/benchmarks.md, "Reading the latest table".
        figure(
          'drain.efficiency',
          'drain efficiency, alone',
          'ratio',
          runs.map((r) => round(r.efficiency!, 3)),
        ),
        figure(
          'drain.rollingEfficiency',
          "drain, alone: the rolling rule's minimum ÷ measured",
          'ratio',
          runs.map((r) => round(r.rollingIdealMs! / r.measuredMs, 4)),
          { target: { op: '>=', value: 0.99, text: '≥ 0.99' } },
        ),
        figure(
          'drain.429',
          'drain: 429 answers, alone',
          'count',
          runs.map((r) => r.tooMany),
          { target: { op: '==', value: 0, text: '0' } },
        ),
      ],
      detail: { budget: DRAIN_BUDGET, commands: DRAIN_COMMANDS, medianMeasuredMs: median(runs.map((r) => r.measuredMs)), runs },
    } satisfies BenchResult;
  },
};

export const drainShared: Benchmark = {
  name: 'drain-shared',
  runsPorter: true,
  description: `the same backlog while another client spends ${OTHER_PER_WINDOW} pulls per window (at window start; steady; late)`,
  async run(context) {
    const burst: DrainRun[] = [];
    for (let i = 0; i < runsFor(context); i++) burst.push(await drainOnce(context, 'burst'));
    // Only counts come out of these, and load can only make porter later, never earlier: they
    // run side by side to keep the whole benchmark short.
    const sideBySide = Array.from({ length: runsFor(context) }, () => ['steady', 'late'] as const).flat();
    const others = await Promise.all(sideBySide.map((kind) => drainOnce(context, kind).then((run) => ({ kind, run }))));
    const steady = others.filter((o) => o.kind === 'steady').map((o) => o.run);
    const late = others.filter((o) => o.kind === 'late').map((o) => o.run);
    const violations = burst.map((r, i) => r.retryAfterViolations + steady[i]!.retryAfterViolations + late[i]!.retryAfterViolations);
    return {
      name: this.name,
      figures: [
        figure('shared.retryAfterViolations', 'sharing: Retry-After violations (all three)', 'count', violations, {
          target: { op: '==', value: 0, text: '0' },
        }),
        figure(
          'shared.burst.429',
          'sharing at window start: 429 answers',
          'count',
          burst.map((r) => r.tooMany),
        ),
        figure(
          'shared.steady.429',
          'sharing, steady: 429 answers',
          'count',
          steady.map((r) => r.tooMany),
        ),
        figure(
          'shared.late.429',
          'sharing, late: 429 answers (forced, 1 per window)',
          'count',
          late.map((r) => r.tooMany),
        ),
        figure(
          'shared.burst.efficiency',
          `sharing at window start: efficiency on the ${DRAIN_BUDGET.perWindow - OTHER_PER_WINDOW} pulls left`,
          'ratio',
          burst.map((r) => round(r.efficiency!, 3)),
        ),
      ],
      detail: { budget: DRAIN_BUDGET, commands: DRAIN_COMMANDS, otherPerWindow: OTHER_PER_WINDOW, burst, steady, late },
    } satisfies BenchResult;
  },
};
