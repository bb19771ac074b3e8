import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { bundleDepsFloor } from '../lib/deps-floor-bundle.js';
import { figure, type BenchResult } from '../lib/figure.js';
import { releaseFixture, startFixture } from '../lib/fixture.js';
import { PORTER_NODE_FLAGS, startPorter, timeProcess } from '../lib/porter-process.js';
import { round } from '../lib/stats.js';
import { until } from '../lib/wait.js';
import { porterOptions, type Benchmark, type BenchContext } from '../lib/context.js';

/**
 * Startup: wall time of `porter --help` and of `node -e 0` (spawn to exit), and of `porter run`
 * from spawn to its first pull arriving at the fake API (both on Date.now of this machine). One
 * untimed round first, so every timed one finds the files in the page cache.
 *
 * Two floors in the same rounds: `node -e 0`, and the dependencies' floor (bench/deps-floor.ts,
 * bundled as porter is and started with porter's node flags), from spawn to its one request
 * arriving at the same fake API: node with commander, pino, undici's Pool and zod loaded. What
 * porter takes beyond that is porter's own.
 */

/** Spawn of the dependencies' floor → its request at the fake API, in ms. */
async function depsFloorFirstRequest(
  bundle: string,
  api: { url: string; requests: readonly { route: string; at: number }[] },
): Promise<number> {
  const seen = api.requests.length;
  const spawnedAt = Date.now();
  const child = spawn(process.execPath, [...PORTER_NODE_FLAGS, bundle, api.url], { stdio: 'ignore' });
  try {
    const request = await until(() => api.requests.slice(seen).find((r) => r.route === 'unknown'), "the dependencies' floor's request", {
      timeoutMs: 20_000,
      intervalMs: 1,
    });
    return request.at - spawnedAt;
  } finally {
    child.kill('SIGKILL');
  }
}

/** When porter last logged "porter started" (config loaded, RCON logged in), from its JSON log. */
function startedLogAt(logPath: string): number | undefined {
  for (const line of readFileSync(logPath, 'utf8').split('\n').reverse()) {
    if (!line.includes('"porter started"')) continue;
    try {
      const time = (JSON.parse(line) as { time?: unknown }).time;
      const at = typeof time === 'string' ? Date.parse(time) : typeof time === 'number' ? time : Number.NaN;
      return Number.isFinite(at) ? at : undefined;
    } catch {
      return undefined;
    }
  }
  return undefined;
}

export const startup: Benchmark = {
  name: 'startup',
  runsPorter: true,
  description: '`porter --help` and `porter run` start → first pull, against `node -e 0`',
  async run(context: BenchContext): Promise<BenchResult> {
    const runs = context.quick ? 3 : 7;
    const fixture = await startFixture();
    const nodeBare: number[] = [];
    const help: number[] = [];
    const firstPull: number[] = [];
    const toStarted: number[] = [];
    const depsFloor: number[] = [];
    const overNode: number[] = [];
    const overDeps: number[] = [];
    try {
      const depsBundle = await bundleDepsFloor(fixture.dir);
      for (let i = -1; i < runs; i++) {
        const bare = await timeProcess(['-e', '0']);
        const helpMs = await timeProcess([...context.build.nodeFlags, context.build.main, '--help']);
        const depsMs = await depsFloorFirstRequest(depsBundle, fixture.api);
        const seen = fixture.api.requests.length;
        const porter = startPorter(fixture.configPath, fixture.dir, porterOptions(context));
        try {
          const pull = await until(() => fixture.api.requests.slice(seen).find((r) => r.route === 'pull'), 'the first pull', {
            timeoutMs: 20_000,
            intervalMs: 1,
            onTimeout: () => porter.tail(),
          });
          if (i < 0) continue; // the warm-up round
          nodeBare.push(round(bare, 1));
          help.push(round(helpMs, 1));
          firstPull.push(pull.at - porter.spawnedAt);
          overNode.push(round(pull.at - porter.spawnedAt - bare, 1));
          depsFloor.push(depsMs);
          overDeps.push(pull.at - porter.spawnedAt - depsMs);
          const started = startedLogAt(porter.logPath);
          if (started !== undefined) toStarted.push(started - porter.spawnedAt);
        } finally {
          await porter.stop();
        }
      }
    } finally {
      await releaseFixture(fixture, context);
    }
    context.progress(
      `  start → first pull ${firstPull.join(' / ')} ms; --help ${help.join(' / ')} ms; node -e 0 ${nodeBare.join(' / ')} ms; dependencies' floor ${depsFloor.join(' / ')} ms`,
    );
    return {
      name: this.name,
      figures: [
        figure('startup.firstPull', 'start → first pull', 'ms', firstPull),
        figure('startup.overNode', 'start → first pull, beyond `node -e 0` in the same round', 'ms', overNode),
        figure('startup.depsFloor', "dependencies' floor: node loading them → its first request", 'ms', depsFloor),
        // node -e 0 + 150 ms is below what loading the dependencies alone takes; porter answers
        // for its own start beyond them: 150 ms, plus the ~17 ms its code costs loaded as the
        // CLI's lazy chunks rather than one file (docs/benchmarks.md, "The start-up's limit").
        figure('startup.overDeps', "start → first pull, beyond the dependencies' floor in the same round", 'ms', overDeps, {
          target: { op: '<=', value: 170, text: '≤ 170 ms' },
        }),
        figure('startup.help', '`porter --help`', 'ms', help),
        figure('startup.nodeBare', '`node -e 0`', 'ms', nodeBare),
      ],
      detail: { runs, startToStartedLogLineMs: toStarted },
    };
  },
};
