import { figure, type BenchResult } from '../lib/figure.js';
import { releaseFixture, startLeanFixture } from '../lib/fixture.js';
import { PORTER_NODE_FLAGS, startPorter, type PorterProcess } from '../lib/porter-process.js';
import { rssKb } from '../lib/proc.js';
import { median, round } from '../lib/stats.js';
import { sleep, until } from '../lib/wait.js';
import { porterOptions, type Benchmark, type BenchContext } from '../lib/context.js';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { SIM_SERVER_ID, SIM_TOKEN } from '../../src/sim/seller-api.js';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleDepsFloor } from '../lib/deps-floor-bundle.js';

/**
 * CPU per command and memory, from one porter process with the budget lifted (the fake and
 * porter both allow a billion calls a window), so porter runs as fast as it can. The API is the
 * lean fake (lib/lean-api.ts): the simulator slows down as its history grows, and at 50,000
 * commands would be the bottleneck instead of porter.
 *
 * CPU: user+sys of the porter process (/proc/<pid>/stat) over each segment of `segment`
 * delivered commands; the figure is the median over the segments. Startup is excluded because
 * the first checkpoint is taken once porter is up and idling. After each segment, while porter
 * idles, the durable floor delivers a slice on its own simulators, and each segment is divided by
 * the slice after it. Memory: VmRSS once porter idles
 * after start and after the last command, next to a bare `node` process's RSS.
 */

const BARE_NODE = ['-e', 'setInterval(() => {}, 1e3)'];
const COMMAND_FLOOR = fileURLToPath(new URL('../command-floor.js', import.meta.url));

function startCommandFloor(apiUrl: string, gamePort: number, password: string, count: string, journal?: string) {
  const args = [COMMAND_FLOOR, apiUrl, SIM_SERVER_ID, String(gamePort), count, ...(journal === undefined ? [] : [journal])];
  return spawn(process.execPath, args, {
    stdio: ['pipe', 'pipe', 'inherit'],
    env: { ...process.env, BENCH_API_TOKEN: SIM_TOKEN, BENCH_RCON_PASSWORD: password },
  });
}

function perCommand(line: string): number {
  const { commands, cpuMs } = JSON.parse(line) as { commands: number; cpuMs: number };
  return cpuMs / commands;
}

/** bench/command-floor.ts against an API and game server: its CPU per command, in ms. */
async function commandFloorMs(apiUrl: string, gamePort: number, password: string, commands: number): Promise<number> {
  const child = startCommandFloor(apiUrl, gamePort, password, String(commands));
  child.stdin.end();
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error(`the command floor exited ${code}: ${out}`);
  return perCommand(out);
}

/**
 * The durable floor (bench/command-floor.ts with a journal), one process for the whole run, asked
 * for a slice at a time: warm from one slice to the next, as porter is from one segment to the
 * next (a process per slice spent most of a 400-command slice compiling: 1.38 ms per command
 * against 0.68 over 10,000).
 */
function durableFloorSlices(apiUrl: string, gamePort: number, password: string, journal: string) {
  const child = startCommandFloor(apiUrl, gamePort, password, '-', journal);
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  return {
    /** Delivers `commands` (queued on its API already); its CPU per command, in ms. */
    async slice(commands: number): Promise<number> {
      child.stdin.write(`${commands}\n`);
      const next = await Promise.race([lines.next(), exited.then((code) => ({ done: true as const, value: code }))]);
      if (next.done) throw new Error(`the durable floor exited ${String(next.value)} during a slice`);
      return perCommand(next.value);
    },
    async stop(): Promise<void> {
      child.stdin.end();
      await exited;
    },
  };
}

interface Checkpoint {
  readonly done: number;
  readonly cpuMs: number;
  readonly userMs: number;
  readonly rssKb: number;
  readonly at: number;
}

type Segment = { readonly from: Checkpoint; readonly to: Checkpoint };

function msPerCommand({ from, to }: Segment): number {
  return (to.cpuMs - from.cpuMs) / (to.done - from.done);
}

export const cpuMemory: Benchmark = {
  name: 'cpu-memory',
  runsPorter: true,
  description: 'CPU per delivered command (budget lifted) and RSS after start / after many commands vs bare node',
  async run(context: BenchContext): Promise<BenchResult> {
    const total = context.quick ? 10_000 : 50_000;
    const segment = 5_000;
    const bare = await medianRss(3, BARE_NODE);
    const fixture = await startLeanFixture();
    const api = fixture.api;
    const floor = await medianRss(3, [...PORTER_NODE_FLAGS, await bundleDepsFloor(fixture.dir), api.url]);
    context.progress(
      `RSS: bare node ${round(bare / 1024, 1)} MB, porter's dependencies alone ${round(floor / 1024, 1)} MB; delivering ${total} commands with the budget lifted`,
    );
    // The durable floor's own API and game server: it runs in slices between porter's segments,
    // while porter idles, and porter's idle pulls must not claim its commands.
    const floorFixture = await startLeanFixture();
    const floorPassword = readFileSync(join(floorFixture.dir, 'rcon-password'), 'utf8');
    const durableFloor = durableFloorSlices(
      floorFixture.api.url,
      floorFixture.game.port,
      floorPassword,
      join(floorFixture.dir, 'floor-journal.log'),
    );
    const durableSliceCommands = context.quick ? 1_000 : 2_000;
    let porter: PorterProcess | undefined;
    try {
      porter = startPorter(fixture.configPath, fixture.dir, porterOptions(context));
      const p = porter;
      // Up and idling: two pulls (the first, and one idle interval later) have been answered.
      await until(() => api.pulls >= 2, 'porter to start and pull twice', { timeoutMs: 20_000, onTimeout: () => p.tail() });
      await sleep(200);
      const checkpoint = (done: number): Checkpoint => {
        const { user, system } = p.cpuTimes();
        return { done, cpuMs: user + system, userMs: user, rssKb: p.rssKb(), at: Date.now() };
      };
      const start = checkpoint(0);

      let enqueued = 0;
      const topUp = (upTo: number) => {
        // Keep a few thousand due until the segment's last, so porter never idles inside a segment.
        while (enqueued < upTo && api.queued < 3_000) api.enqueue(`say bench ${enqueued++}`);
      };
      // Each segment from where porter resumed to where it reached `next`: the floor's slices fall between.
      const segments: Segment[] = [];
      const durableSlices: number[] = [];
      let from = start;
      for (let next = segment; next <= total; next += segment) {
        await until(
          () => {
            topUp(next);
            return api.done >= next;
          },
          `${next} deliveries`,
          { timeoutMs: 300_000, intervalMs: 2, onTimeout: () => p.tail() },
        );
        const to = checkpoint(api.done);
        segments.push({ from, to });
        // The durable floor's slice, in the same minute as the segment it is compared with.
        for (let i = 0; i < durableSliceCommands; i++) floorFixture.api.enqueue(`say durable floor ${next} ${i}`);
        durableSlices.push(await durableFloor.slice(durableSliceCommands));
        context.progress(
          `  ${api.done} delivered, RSS ${round(p.rssKb() / 1024, 1)} MB, ${round(msPerCommand({ from, to }), 3)} ms per command; the durable floor beside it ${round(durableSlices.at(-1)!, 3)} ms`,
        );
        // porter idled while the floor ran: its next segment is measured from here.
        from = checkpoint(api.done);
      }
      const checkpoints = [start, ...segments.map(({ to }) => to)];
      const end = checkpoints.at(-1)!;
      const perSegment = segments.map(msPerCommand);
      const rates = segments.map(({ from, to }) => ((to.done - from.done) * 1000) / (to.at - from.at));
      // Over the segments alone: porter's idle turns while the floor ran are not commands' CPU.
      const sum = (of: (s: Segment) => number) => segments.reduce((total, s) => total + of(s), 0);
      const done = sum(({ from, to }) => to.done - from.done);
      const overall = sum(({ from, to }) => to.cpuMs - from.cpuMs) / done;
      const overallUser = sum(({ from, to }) => to.userMs - from.userMs) / done;
      const ran = fixture.game.executed.filter((e) => !e.query).length;
      if (api.unexpectedReports > 0 || api.failed > 0 || ran !== api.claims) {
        throw new Error(
          `benchmark: ${api.claims} claims, ${ran} commands run, ${api.failed} failed, ${api.unexpectedReports} unexpected reports: porter misbehaved, figures are void`,
        );
      }
      // The plain floor: the same work, pull → RCON → done, by a program that does nothing else.
      await porter.stop();
      porter = undefined;
      const floorCommands = context.quick ? 2_000 : 10_000;
      for (let i = 0; i < floorCommands; i++) floorFixture.api.enqueue(`say floor ${i}`);
      const floorMs = await commandFloorMs(floorFixture.api.url, floorFixture.game.port, floorPassword, floorCommands);
      const durableRatios = perSegment.map((ms, i) => ms / durableSlices[i]!);
      const durableMs = median(durableSlices);
      context.progress(
        `  floor: ${round(floorMs, 3)} ms of CPU per command over ${floorCommands}; durable ${round(durableMs, 3)} ms (slices ${durableSlices.map((v) => round(v, 3)).join(', ')}); porter ${round(median(perSegment), 3)} ms, ÷ durable floor ${round(median(durableRatios), 2)}`,
      );
      const growthMb = (end.rssKb - start.rssKb) / 1024;
      // After the first 10,000 (V8's heap and the allocator's arenas have grown to their working
      // size by then), further growth is what a leak would look like.
      const warmIndex = total >= 20_000 ? 2 : 1;
      const warm = checkpoints[warmIndex]!;
      const lateGrowthMb = (end.rssKb - warm.rssKb) / 1024;
      return {
        name: this.name,
        figures: [
          figure(
            'cpu.perCommand',
            `CPU per command (median of ${perSegment.length} × ${segment})`,
            'ms',
            perSegment.map((v) => round(v, 3)),
          ),
          figure('cpu.perCommandFloor', 'CPU per command of the floor: pull → RCON → done and nothing else', 'ms', [round(floorMs, 3)]),
          // The plain floor keeps no promise; the target is the durable floor's (docs/benchmarks.md).
          figure('cpu.perCommandRatio', 'CPU per command: porter ÷ floor', 'ratio', [round(median(perSegment) / floorMs, 2)]),
          figure(
            'cpu.perCommandDurableFloor',
            `CPU per command of the durable floor: the same, the claim and the outcome fdatasync’d (${durableSlices.length} × ${durableSliceCommands}, one after each segment)`,
            'ms',
            durableSlices.map((v) => round(v, 3)),
          ),
          // Each segment against the floor's slice right after it: load that comes and goes moves both alike.
          figure(
            'cpu.perCommandDurableRatio',
            'CPU per command: porter ÷ durable floor, segment by segment',
            'ratio',
            durableRatios.map((v) => round(v, 2)),
            {
              value: round(median(durableRatios), 2),
              target: { op: '<=', value: 1.5, text: '≤ 1.5' },
            },
          ),
          figure('memory.rssAfterStart', 'RSS after start', 'MB', [round(start.rssKb / 1024, 1)]),
          figure('memory.rssAfterMany', `RSS after ${total} commands`, 'MB', [round(end.rssKb / 1024, 1)]),
          figure('memory.bareNode', 'RSS of a bare node process', 'MB', [round(bare / 1024, 1)]),
          figure('memory.depsFloor', "RSS of node with porter's dependencies loaded, nothing else", 'MB', [round(floor / 1024, 1)]),
          // 1.5 × bare node is below the dependencies' own floor; what porter answers for is what it
          // holds above it: its young generation at the size the bin's --max-semi-space-size=16
          // allows (two semi-spaces, 32 MB) and its own working set.
          figure(
            'memory.aboveDepsFloor',
            `RSS after ${total} commands, above the dependencies' floor`,
            'MB',
            [round((end.rssKb - floor) / 1024, 1)],
            {
              target: { op: '<=', value: 48, text: '≤ 48 MB' },
            },
          ),
          figure('memory.growth', `RSS growth over ${total} commands`, 'MB', [round(growthMb, 1)]),
          figure('memory.lateGrowth', `RSS growth from command ${warmIndex * segment} to ${total}`, 'MB', [round(lateGrowthMb, 1)], {
            target: { op: '<', value: 5, text: '< 5 MB' },
          }),
        ],
        detail: {
          commands: total,
          overallCpuMsPerCommand: round(overall, 3),
          overallUserMsPerCommand: round(overallUser, 3),
          overallSystemMsPerCommand: round(overall - overallUser, 3),
          commandsPerSecond: rates.map((r) => round(r)),
          checkpoints: checkpoints.map((c) => ({
            done: c.done,
            cpuMs: round(c.cpuMs),
            rssMb: round(c.rssKb / 1024, 1),
            atMs: c.at - start.at,
          })),
        },
      };
    } finally {
      await porter?.stop();
      await durableFloor.stop();
      await releaseFixture(fixture, context);
      await floorFixture.close();
    }
  },
};

/** Median VmRSS (kB) of `runs` node processes started with `args`, one second after each starts. */
async function medianRss(runs: number, args: readonly string[]): Promise<number> {
  const values: number[] = [];
  for (let i = 0; i < runs; i++) {
    const child = spawn(process.execPath, args, { stdio: 'ignore' });
    try {
      const pid = child.pid;
      if (pid === undefined) throw new Error(`could not start node ${args.join(' ')}`);
      // Let it finish starting (module loading, first GC) before reading.
      await sleep(1000);
      values.push(rssKb(pid));
    } finally {
      child.kill('SIGKILL');
    }
  }
  return median(values);
}
