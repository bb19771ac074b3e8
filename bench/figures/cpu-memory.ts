import { figure, type BenchResult } from '../lib/figure.js';
import { releaseFixture, startLeanFixture } from '../lib/fixture.js';
import { PORTER_NODE_FLAGS, startPorter, type PorterProcess } from '../lib/porter-process.js';
import { rssKb } from '../lib/proc.js';
import { median, round } from '../lib/stats.js';
import { sleep, until } from '../lib/wait.js';
import { porterOptions, type Benchmark, type BenchContext } from '../lib/context.js';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
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
 * CPU: user+sys of the porter process (/proc/<pid>/stat) between checkpoints every `segment`
 * delivered commands; the figure is the median over the segments. Startup is excluded because
 * the first checkpoint is taken once porter is up and idling. Memory: VmRSS once porter idles
 * after start and after the last command, next to a bare `node` process's RSS.
 */

const BARE_NODE = ['-e', 'setInterval(() => {}, 1e3)'];
const COMMAND_FLOOR = fileURLToPath(new URL('../command-floor.js', import.meta.url));

/** bench/command-floor.ts against the same API and game server: its CPU per command, in ms; with `journal`, the durable floor. */
async function commandFloorMs(apiUrl: string, gamePort: number, password: string, commands: number, journal?: string): Promise<number> {
  const args = [COMMAND_FLOOR, apiUrl, SIM_SERVER_ID, String(gamePort), String(commands), ...(journal === undefined ? [] : [journal])];
  const child = spawn(process.execPath, args, {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, BENCH_API_TOKEN: SIM_TOKEN, BENCH_RCON_PASSWORD: password },
  });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error(`the command floor exited ${code}: ${out}`);
  const { commands: delivered, cpuMs } = JSON.parse(out) as { commands: number; cpuMs: number };
  return cpuMs / delivered;
}

interface Checkpoint {
  readonly done: number;
  readonly cpuMs: number;
  readonly userMs: number;
  readonly rssKb: number;
  readonly at: number;
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
      const topUp = () => {
        // Keep a few thousand due at all times, so porter never idles between checkpoints.
        while (enqueued < total && api.queued < 3_000) api.enqueue(`say bench ${enqueued++}`);
      };
      const checkpoints: Checkpoint[] = [start];
      for (let next = segment; next <= total; next += segment) {
        await until(
          () => {
            topUp();
            return api.done >= next;
          },
          `${next} deliveries`,
          { timeoutMs: 300_000, intervalMs: 2, onTimeout: () => p.tail() },
        );
        checkpoints.push(checkpoint(api.done));
        context.progress(`  ${api.done} delivered, RSS ${round(p.rssKb() / 1024, 1)} MB`);
      }
      const end = checkpoints.at(-1)!;
      const perSegment = checkpoints.slice(1).map((c, i) => (c.cpuMs - checkpoints[i]!.cpuMs) / (c.done - checkpoints[i]!.done));
      const rates = checkpoints.slice(1).map((c, i) => ((c.done - checkpoints[i]!.done) * 1000) / (c.at - checkpoints[i]!.at));
      const overall = (end.cpuMs - start.cpuMs) / (end.done - start.done);
      const overallUser = (end.userMs - start.userMs) / (end.done - start.done);
      const ran = fixture.game.executed.filter((e) => !e.query).length;
      if (api.unexpectedReports > 0 || api.failed > 0 || ran !== api.claims) {
        throw new Error(
          `benchmark: ${api.claims} claims, ${ran} commands run, ${api.failed} failed, ${api.unexpectedReports} unexpected reports: porter misbehaved, figures are void`,
        );
      }
      // The floor: the same work, pull → RCON → done, by a program that does nothing else.
      await porter.stop();
      porter = undefined;
      const floorCommands = context.quick ? 2_000 : 10_000;
      const password = readFileSync(join(fixture.dir, 'rcon-password'), 'utf8');
      for (let i = 0; i < floorCommands; i++) api.enqueue(`say floor ${i}`);
      const floorMs = await commandFloorMs(api.url, fixture.game.port, password, floorCommands);
      // The durable floor: the same, and the claim and the outcome written and synced as porter's
      // journal does, in the state directory porter used (the same file system).
      for (let i = 0; i < floorCommands; i++) api.enqueue(`say durable floor ${i}`);
      const durableMs = await commandFloorMs(api.url, fixture.game.port, password, floorCommands, join(fixture.dir, 'floor-journal.log'));
      context.progress(
        `  floor: ${round(floorMs, 3)} ms of CPU per command over ${floorCommands}, durable ${round(durableMs, 3)} ms (porter: ${round(median(perSegment), 3)} ms)`,
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
            'CPU per command of the durable floor: the same, the claim and the outcome fdatasync’d',
            'ms',
            [round(durableMs, 3)],
          ),
          figure(
            'cpu.perCommandDurableRatio',
            'CPU per command: porter ÷ durable floor',
            'ratio',
            [round(median(perSegment) / durableMs, 2)],
            {
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
      await releaseFixture(fixture, context);
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
