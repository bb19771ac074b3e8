import { figure, type BenchResult } from '../lib/figure.js';
import { type Fixture, releaseFixture, startFixture } from '../lib/fixture.js';
import { ExecutedLog } from '../lib/executed.js';
import { startPorter, type PorterProcess } from '../lib/porter-process.js';
import { RequestTally } from '../lib/requests.js';
import { exponential, median, percentile, round, uniform } from '../lib/stats.js';
import { sleep, until } from '../lib/wait.js';
import { porterOptions, type Benchmark, type BenchContext } from '../lib/context.js';

/**
 * Latency while porter idles, at the defaults (poll.idleMs 1000, players.refreshMs 2000, budget
 * 120 per 60 s): the config porter runs with sets none of them.
 *
 * Idle: commands become due (enqueued with executeAt = now) at the moments of a Poisson process,
 * one every 4 s on average; latency = when the fake RCON server ran it − when it became due.
 *
 * Join: an online-only command for a player who is not online is queued; once porter has pulled
 * after that (and got nothing), the player joins at a random moment within one refreshMs;
 * latency = when the command ran − when the player joined.
 *
 * Several runs, each its own porter process and fakes, run side by side: porter idles here, so
 * they do not compete for the CPU, and the samples of each run stay its own.
 */

const IDLE_MS = 1000;
const REFRESH_MS = 2000;

interface LatencyRun {
  readonly samples: number[];
  readonly tooMany: number;
  readonly retryAfterViolations: number;
  /** Pulls per minute while the run lasted (the budget is 120). */
  readonly pullsPerMinute: number;
  /** Gaps between consecutive empty pulls: porter's idle pacing as the API saw it. */
  readonly idlePullGapMs: { readonly p50: number; readonly min: number; readonly max: number };
}

function summarize(samples: readonly number[]) {
  return {
    n: samples.length,
    p50: percentile(samples, 50),
    p95: percentile(samples, 95),
    p99: percentile(samples, 99),
    max: Math.max(...samples),
  };
}

/** Starts porter against fresh fakes, lets `body` collect samples, and adds what the API saw. */
async function withPorter(
  context: BenchContext,
  body: (fixture: Fixture, tally: RequestTally, porter: PorterProcess) => Promise<number[]>,
): Promise<LatencyRun> {
  const fixture = await startFixture();
  let porter: PorterProcess | undefined;
  try {
    const tally = new RequestTally(fixture.api);
    const emptyPulls: number[] = [];
    tally.onRequest((request) => {
      if (request.route === 'pull' && request.status === 204) emptyPulls.push(request.at);
    });
    porter = startPorter(fixture.configPath, fixture.dir, porterOptions(context));
    const p = porter;
    await until(() => tally.update().pulls >= 1, 'the first pull', { timeoutMs: 20_000, onTimeout: () => p.tail() });
    const started = Date.now();
    const samples = await body(fixture, tally, p);
    const minutes = (Date.now() - started) / 60_000;
    const doubleClaims = fixture.api.commands().filter((c) => c.claims > 1).length;
    if (doubleClaims > 0) throw new Error(`benchmark: ${doubleClaims} commands were claimed twice: porter is broken, figures are void`);
    const gaps = emptyPulls.slice(1).map((at, i) => at - emptyPulls[i]!);
    return {
      samples,
      tooMany: tally.tooMany,
      retryAfterViolations: fixture.api.retryAfterViolations,
      pullsPerMinute: round(tally.pulls / minutes),
      idlePullGapMs: { p50: percentile(gaps, 50), min: Math.min(...gaps), max: Math.max(...gaps) },
    };
  } finally {
    await porter?.stop();
    await releaseFixture(fixture, context);
  }
}

/**
 * Mean gap between two purchases in the idle benchmark. Each delivery costs two pulls (the claim
 * and the pull right after it), so at one purchase every 1.5 s deliveries alone would take 80 of
 * the 120 pulls a minute and leave an idling pacer nothing to spread: that is a busy store, not an
 * idle one. One every 4 s takes 30.
 */
const MEAN_GAP_MS = 4000;

async function idleRun(context: BenchContext, count: number): Promise<LatencyRun> {
  return withPorter(context, async (fixture, tally, porter) => {
    const executed = new ExecutedLog(fixture.game);
    const due: Array<{ command: string; dueAt: number }> = [];
    // Poisson arrivals on their own clock, never timed from porter's deliveries: such arrivals see
    // porter's polling phase as a time average (PASTA), whatever its pacing. Gaps measured from
    // the last delivery would not: porter re-times its polls after each one.
    let next = Date.now() + exponential(MEAN_GAP_MS);
    for (let i = 0; i < count; i++) {
      await sleep(Math.max(0, next - Date.now()));
      const command = `say idle ${i}`;
      const dueAt = Date.now();
      fixture.api.enqueue(fixture.serverId, { command, offlineExecute: true, executeAt: dueAt });
      due.push({ command, dueAt });
      next += exponential(MEAN_GAP_MS);
    }
    await until(
      () => due.every((d) => executed.ranAt(d.command) !== undefined) && tally.update().doneOk >= count,
      `all ${count} commands to run and be reported`,
      {
        timeoutMs: 120_000,
        onTimeout: () => porter.tail(),
      },
    );
    return due.map((d) => executed.ranAt(d.command)! - d.dueAt);
  });
}

async function joinRun(context: BenchContext, count: number): Promise<LatencyRun> {
  return withPorter(context, async (fixture, tally, porter) => {
    const executed = new ExecutedLog(fixture.game);
    const samples: number[] = [];
    for (let i = 0; i < count; i++) {
      const player = `joiner${i}`;
      const command = `give ${player} diamond 1`;
      const queuedAt = Date.now();
      fixture.api.enqueue(fixture.serverId, { command, player, offlineExecute: false });
      // porter has looked and found nothing it may run: the command waits for its player.
      await until(() => (tally.update().lastPullAt ?? 0) > queuedAt, 'a pull after queueing', { timeoutMs: 120_000 });
      await sleep(uniform(0, REFRESH_MS));
      const joinedAt = Date.now();
      fixture.game.join(player);
      const ranAt = await until(() => executed.ranAt(command), `"${command}" to run after the join`, {
        timeoutMs: 120_000,
        intervalMs: 2,
        onTimeout: () => porter.tail(),
      });
      samples.push(ranAt - joinedAt);
      await until(() => tally.update().doneOk >= i + 1, `"${command}" to be reported`, {
        timeoutMs: 120_000,
        onTimeout: () => porter.tail(),
      });
      fixture.game.leave(player);
      await sleep(uniform(100, 500));
    }
    return samples;
  });
}

function runCount(context: BenchContext): number {
  return context.quick ? 1 : 3;
}

/** Idle runs are long (samples × 4 s) and cost nothing to run side by side, so there are more of them. */
function idleRunCount(context: BenchContext): number {
  return context.quick ? 1 : 4;
}

export const idleLatency: Benchmark = {
  name: 'idle-latency',
  runsPorter: true,
  description: `due → executed on the game server while porter idles, default poll.idleMs (${IDLE_MS}) and budget`,
  sideBySide: true,
  async run(context) {
    const perRun = context.quick ? 15 : 30;
    const runs = await Promise.all(Array.from({ length: idleRunCount(context) }, () => idleRun(context, perRun)));
    const stats = runs.map((r) => summarize(r.samples));
    context.progress(`  idle latency p50 ${stats.map((s) => s.p50).join(' / ')} ms, p99 ${stats.map((s) => s.p99).join(' / ')} ms`);
    return {
      name: this.name,
      figures: [
        figure(
          'idle.p50',
          'idle latency p50',
          'ms',
          stats.map((s) => s.p50),
          {
            target: { op: '<=', value: 0.55 * IDLE_MS + 50, text: '≤ 0.55 × idleMs + 50' },
          },
        ),
        figure(
          'idle.p95',
          'idle latency p95',
          'ms',
          stats.map((s) => s.p95),
        ),
        figure(
          'idle.p99',
          'idle latency p99',
          'ms',
          stats.map((s) => s.p99),
          {
            target: { op: '<=', value: 1.3 * IDLE_MS + 100, text: '≤ 1.3 × idleMs + 100' },
          },
        ),
        figure(
          'idle.429',
          'idle: 429 answers',
          'count',
          runs.map((r) => r.tooMany),
          { target: { op: '==', value: 0, text: '0' } },
        ),
      ],
      detail: {
        idleMs: IDLE_MS,
        samplesPerRun: perRun,
        pooled: summarize(runs.flatMap((r) => r.samples)),
        runs: runs.map((r, i) => ({
          ...stats[i],
          pullsPerMinute: r.pullsPerMinute,
          idlePullGapMs: r.idlePullGapMs,
          retryAfterViolations: r.retryAfterViolations,
          samples: r.samples,
        })),
      },
    } satisfies BenchResult;
  },
};

export const joinLatency: Benchmark = {
  name: 'join-latency',
  runsPorter: true,
  description: `player joins → their online-only command executed, default players.refreshMs (${REFRESH_MS})`,
  sideBySide: true,
  async run(context) {
    const perRun = context.quick ? 6 : 12;
    const runs = await Promise.all(Array.from({ length: runCount(context) }, () => joinRun(context, perRun)));
    const stats = runs.map((r) => summarize(r.samples));
    context.progress(`  join latency p50 ${stats.map((s) => s.p50).join(' / ')} ms, max ${stats.map((s) => s.max).join(' / ')} ms`);
    return {
      name: this.name,
      figures: [
        figure(
          'join.p50',
          'join latency p50',
          'ms',
          stats.map((s) => s.p50),
        ),
        figure(
          'join.max',
          'join latency, worst sample',
          'ms',
          stats.map((s) => s.max),
          {
            target: { op: '<=', value: REFRESH_MS + 300, text: '≤ refreshMs + 300' },
          },
        ),
      ],
      detail: {
        refreshMs: REFRESH_MS,
        samplesPerRun: perRun,
        pooled: summarize(runs.flatMap((r) => r.samples)),
        medianOfRunMedians: median(stats.map((s) => s.p50)),
        runs: runs.map((r, i) => ({ ...stats[i], pullsPerMinute: r.pullsPerMinute, idlePullGapMs: r.idlePullGapMs, samples: r.samples })),
      },
    } satisfies BenchResult;
  },
};
