import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startRconServer, type FakeRconServer } from '../../src/sim/rcon-server.js';
import { SIM_TOKEN, startSellerApi, type FakeSellerApi } from '../../src/sim/seller-api.js';
import { porterOptions, type Benchmark, type BenchContext } from '../lib/context.js';
import { figure, type BenchResult } from '../lib/figure.js';
import { sideBySide, startFloor, type FloorSchedule } from '../lib/fleet-floor.js';
import { freePort } from '../lib/free-port.js';
import { startPorter, type PorterProcess } from '../lib/porter-process.js';
import { round } from '../lib/stats.js';
import { sleep, until } from '../lib/wait.js';

/**
 * 1,000 servers in one porter process, at the defaults (budget 120 per 60 s per server, idleMs
 * 1000, players.refreshMs 2000), against the Seller API simulator (which knows all 1,000 ids) and
 * a few RCON simulators that each take a share of the connections: porter opens one connection
 * per configured server, so the game side sees 1,000 logins whatever the number of simulators.
 *
 * - start → all connected: spawn to the moment the RCON simulators hold 1,000 connections; and
 *   spawn to the moment every server's first pull has reached the API (logged in, players read,
 *   pulling).
 * - idle: porter's own CPU (utime + stime of /proc/<pid>/stat) over `idleSeconds`, as % of one
 *   core, and the API calls per second per server the simulator saw over the same span.
 * - RSS after the idle span.
 * - burst: one due command queued for every server at once → every one run on its game server,
 *   and every one reported done.
 */

const SERVERS = 1_000;
const GAME_SERVERS = 4;
const WEBHOOK_IDLE_MS = 15_000;

/** How porter and its floor are measured side by side: slices of `seconds`, so many in a record and in a quick run. */
interface Slicing {
  readonly seconds: number;
  readonly record: number;
  readonly quick: number;
}
const POLLING_SLICES: Slicing = { seconds: 5, record: 6, quick: 3 };
/** A whole poll.idleMs each: the safety-net pulls come in waves 15 s apart, and a shorter slice reads a wave or none. */
const WEBHOOK_SLICES: Slicing = { seconds: WEBHOOK_IDLE_MS / 1000, record: 4, quick: 2 };

interface Scene {
  readonly api: FakeSellerApi;
  readonly games: FakeRconServer[];
  /** The floor's own simulators, so that it runs beside porter without sharing a budget or a connection. */
  readonly floorApi: FakeSellerApi;
  readonly floorGames: FakeRconServer[];
  readonly ids: string[];
  readonly dir: string;
  readonly configPath: string;
  readonly password: string;
}

const ID_PREFIX = '00000000-0000-4000-8000-';

function serverId(i: number): string {
  return `${ID_PREFIX}${i.toString(16).padStart(12, '0')}`;
}

async function startScene(): Promise<Scene> {
  const password = randomBytes(12).toString('hex');
  const ids = Array.from({ length: SERVERS }, (_, i) => serverId(i + 1));
  const { api, games } = await startSimulators(ids, password);
  const floor = await startSimulators(ids, password);
  const dir = mkdtempSync(join(tmpdir(), 'porter-bench-fleet-'));
  writeFileSync(join(dir, 'api-token'), SIM_TOKEN, { mode: 0o600 });
  writeFileSync(join(dir, 'rcon-password'), password, { mode: 0o600 });
  writeFileSync(join(dir, 'webhook-secret'), `whsec_${randomBytes(24).toString('base64')}`, { mode: 0o600 });
  const configPath = join(dir, 'config.json');
  writeFileSync(configPath, JSON.stringify(fleetConfig(api, games, ids)));
  return { api, games, floorApi: floor.api, floorGames: floor.games, ids, dir, configPath, password };
}

async function startSimulators(ids: readonly string[], password: string): Promise<{ api: FakeSellerApi; games: FakeRconServer[] }> {
  const api = await startSellerApi({ servers: [...ids] });
  const games: FakeRconServer[] = [];
  for (let i = 0; i < GAME_SERVERS; i++) games.push(await startRconServer({ password, flavour: 'minecraft', players: [] }));
  return { api, games };
}

/** Polling only at the defaults, or (`webhook`) wake-ups on with `poll.idleMs` 15 s, the set-up the docs advise for a fleet. */
function fleetConfig(api: FakeSellerApi, games: readonly FakeRconServer[], ids: readonly string[], webhook?: { listen: string }): unknown {
  return {
    api: { baseUrl: api.url, tokenFile: './api-token', ...(webhook ? { webhookSecretFile: './webhook-secret' } : {}) },
    ...(webhook ? { webhook: { listen: webhook.listen }, poll: { idleMs: WEBHOOK_IDLE_MS } } : {}),
    servers: ids.map((id, i) => {
      const game = games[i % games.length]!;
      return {
        id,
        name: `fleet ${i + 1}`,
        executor: { type: 'rcon', host: game.host, port: game.port, passwordFile: './rcon-password' },
        players: { preset: 'minecraft' },
      };
    }),
    stateDir: './state',
    log: { level: 'info' },
  };
}

export const fleet: Benchmark = {
  name: 'fleet',
  runsPorter: true,
  description: `${SERVERS.toLocaleString('en-US')} servers in one porter: start-up, idle CPU and API calls, RSS, a burst of one purchase per server`,
  async run(context: BenchContext): Promise<BenchResult> {
    const idleSeconds = context.quick ? 10 : 20;
    const scene = await startScene();
    const { api, games } = scene;
    let porter: PorterProcess | undefined;
    try {
      porter = startPorter(scene.configPath, scene.dir, porterOptions(context));
      const p = porter;
      const onTimeout = () => p.tail();
      const connected = () => games.reduce((sum, g) => sum + g.connections, 0);
      await until(() => connected() >= SERVERS, `${SERVERS} RCON connections`, { timeoutMs: 60_000, intervalMs: 2, onTimeout });
      const connectedMs = Date.now() - p.spawnedAt;
      const pulled = new Set<string>();
      let scanned = 0;
      const everyServerPulled = () => {
        const requests = api.requests;
        for (; scanned < requests.length; scanned++) {
          const r = requests[scanned]!;
          if (r.route === 'pull' && r.serverId !== undefined) pulled.add(r.serverId);
        }
        return pulled.size >= SERVERS;
      };
      await until(everyServerPulled, 'a pull from every server', { timeoutMs: 60_000, intervalMs: 2, onTimeout });
      const firstPullsMs = Date.now() - p.spawnedAt;
      context.progress(`  all ${SERVERS} connected after ${connectedMs} ms, every server pulled after ${firstPullsMs} ms`);

      // Let start-up's garbage and first windows settle before the idle span.
      await sleep(5_000);
      const idle = await measureIdle(p, api, games, idleSeconds);
      const pollingConnections = api.connections;
      const { seconds, idleCpuPercent, callsPerServer, rssMb } = idle;
      context.progress(
        `  idle: ${round(idleCpuPercent, 1)} % of a core, ${round(callsPerServer, 2)} API calls/s per server, RSS ${round(rssMb, 1)} MB; the simulators took ${round(idle.harnessPercent, 1)} %`,
      );

      const besideFloor = besideFloorOf(scene, context, pollingConnections);
      const pullsPerSecond = idle.requests / idle.seconds;
      const polling = await besideFloor('polling', p, pullsPerSecond, idle.rconPerSecond, POLLING_SLICES, 'tick');
      // The same calls with a timer per server, as porter's loops wake: what that schedule costs any program.
      const pollingScheduled = await besideFloor(
        "polling, on porter's schedule",
        p,
        pullsPerSecond,
        idle.rconPerSecond,
        POLLING_SLICES,
        'per-server',
      );

      // The burst: one due command per server, all at once.
      // Counted incrementally: the executed lists grow by every player-list read, and scanning them
      // whole every few ms would make the harness, not porter, set the pace.
      const seen = games.map((g) => g.executed.length);
      let ranCount = 0;
      const ran = () => {
        games.forEach((g, i) => {
          for (; seen[i]! < g.executed.length; seen[i]!++) if (!g.executed[seen[i]!]!.query) ranCount++;
        });
        return ranCount;
      };
      let doneScanned = api.requests.length;
      let done = 0;
      const reported = () => {
        const requests = api.requests;
        for (; doneScanned < requests.length; doneScanned++) {
          const r = requests[doneScanned]!;
          if (r.route === 'done' && r.status === 200) done++;
        }
        return done;
      };
      const burstAt = Date.now();
      for (const id of scene.ids) api.enqueue(id, { command: `say burst ${id}` });
      // Bounded, not fatal: a pull whose answer is lost leaves its command PROCESSING on the
      // simulator for good (the claim gap, docs/design.md), and the figure then says so.
      let burstRunMs = Number.NaN;
      let burstReportedMs = Number.NaN;
      const burstDeadline = burstAt + 30_000;
      while (Date.now() < burstDeadline && Number.isNaN(burstReportedMs)) {
        if (Number.isNaN(burstRunMs) && ran() >= SERVERS) burstRunMs = Date.now() - burstAt;
        if (reported() >= SERVERS) burstReportedMs = Date.now() - burstAt;
        await sleep(5);
      }
      const claimedTwice = api.commands().filter((c) => c.claims > 1).length;
      if (claimedTwice > 0 || ran() > SERVERS) {
        throw new Error(
          `benchmark: ${claimedTwice} commands claimed twice, ${ran()} run for ${SERVERS} queued: porter misbehaved, figures are void`,
        );
      }
      if (Number.isNaN(burstReportedMs)) context.progress(`  burst: only ${ran()} run and ${reported()} reported after 30 s`);
      else context.progress(`  burst: all run after ${burstRunMs} ms, all reported after ${burstReportedMs} ms`);
      const burstRan = ran();
      const burstReported = reported();

      // The same fleet with webhook wake-ups and poll.idleMs 15 s, as the docs advise a host: idle.
      await porter.stop();
      porter = undefined;
      await until(() => connected() === 0, 'the first porter to let go of its connections', { timeoutMs: 30_000, intervalMs: 10 });
      const listen = `127.0.0.1:${await freePort()}`;
      writeFileSync(scene.configPath, JSON.stringify(fleetConfig(api, games, scene.ids, { listen })));
      porter = startPorter(scene.configPath, scene.dir, porterOptions(context));
      const w = porter;
      await until(() => connected() >= SERVERS, `${SERVERS} RCON connections (webhooks)`, {
        timeoutMs: 60_000,
        intervalMs: 2,
        onTimeout: () => w.tail(),
      });
      await sleep(5_000);
      // Long enough for every server's safety-net pull (one per 15 s) to fall inside it, twice.
      const pushed = await measureIdle(w, api, games, Math.max(idleSeconds, 30));
      context.progress(
        `  idle with webhooks (poll.idleMs ${WEBHOOK_IDLE_MS / 1000} s): ${round(pushed.idleCpuPercent, 1)} % of a core, ${round(pushed.callsPerServer * 60, 1)} API calls a minute per server, ${round(pushed.rconPerSecond)} player-list reads/s`,
      );
      const webhookReads = await besideFloor('webhooks (player reads alone)', w, 0, pushed.rconPerSecond, WEBHOOK_SLICES, 'tick');
      const webhookReadsScheduled = await besideFloor(
        "webhooks (player reads alone), on porter's schedule",
        w,
        0,
        pushed.rconPerSecond,
        WEBHOOK_SLICES,
        'per-server',
      );
      // With the safety-net pulls too (one per server per poll.idleMs): what the reads-alone floor
      // leaves out of what porter does, shown beside it.
      const webhookFull = await besideFloor(
        'webhooks (reads and the safety-net pulls)',
        w,
        pushed.callsPerServer * SERVERS,
        pushed.rconPerSecond,
        WEBHOOK_SLICES,
        'tick',
      );
      await porter.stop();
      porter = undefined;
      await until(() => connected() === 0, 'the second porter to let go of its connections', { timeoutMs: 30_000, intervalMs: 10 });

      return {
        name: this.name,
        figures: [
          figure('fleet.connected', `${SERVERS} servers: start → all connected`, 'ms', [connectedMs], {
            target: { op: '<=', value: 3000, text: '≤ 3 s' },
          }),
          figure('fleet.firstPulls', `${SERVERS} servers: start → every server pulled`, 'ms', [firstPullsMs]),
          // Absolute CPU moves 1.7× with the machine's day; the targets are the ratios to the floors.
          figure(
            'fleet.idleCpu',
            `${SERVERS} servers idle: porter's CPU, side by side with its floor (% of a core)`,
            '%',
            roundAll(polling.porter),
            {
              value: round(polling.porterPercent, 1),
            },
          ),
          figure(
            'fleet.idleCpuFloor',
            `${SERVERS} servers idle: the floor's CPU in the same seconds, the same calls and nothing else (% of a core)`,
            '%',
            roundAll(polling.floor),
            { value: round(polling.floorPercent, 1) },
          ),
          // porter's loops wake one by one, each server timed from its own last answer; the floor that
          // batches every call on one 20 ms tick is the cheapest any program makes them, and the
          // schedule alone costs that floor a share of its own (docs/benchmarks.md, "The schedule").
          figure('fleet.idleCpuRatio', `${SERVERS} servers idle: porter ÷ floor`, 'ratio', roundAll(polling.ratios, 2), {
            value: round(polling.ratio, 2),
          }),
          figure(
            'fleet.floorScheduleCost',
            `${SERVERS} servers idle: the floor on porter's schedule (a timer per server) ÷ the floor`,
            'ratio',
            [round(polling.ratio / pollingScheduled.ratio, 2)],
          ),
          figure(
            'fleet.idleCpuScheduledRatio',
            `${SERVERS} servers idle: porter ÷ the floor on porter's schedule`,
            'ratio',
            roundAll(pollingScheduled.ratios, 2),
            { value: round(pollingScheduled.ratio, 2), target: { op: '<=', value: 1.5, text: '≤ 1.5' } },
          ),
          figure('fleet.callsPerServer', `${SERVERS} servers idle: API calls/s per server`, 'https://gh.zcca.site/s per server', [
            round(callsPerServer, 2),
          ]),
          figure(
            'fleet.idleCpuWebhook',
            `${SERVERS} servers idle, webhooks on (poll.idleMs 15 s): porter's CPU, side by side with its floors (% of a core)`,
            '%',
            roundAll([...webhookReads.porter, ...webhookFull.porter]),
          ),
          figure(
            'fleet.idleCpuWebhookRatio',
            `${SERVERS} servers idle, webhooks on: porter ÷ the floor of its player reads alone`,
            'ratio',
            roundAll(webhookReads.ratios, 2),
            { value: round(webhookReads.ratio, 2) },
          ),
          figure(
            'fleet.idleCpuWebhookScheduledRatio',
            `${SERVERS} servers idle, webhooks on: porter ÷ the floor of its player reads alone on porter's schedule`,
            'ratio',
            roundAll(webhookReadsScheduled.ratios, 2),
            { value: round(webhookReadsScheduled.ratio, 2), target: { op: '<=', value: 1.5, text: '≤ 1.5' } },
          ),
          figure(
            'fleet.idleCpuWebhookFullRatio',
            `${SERVERS} servers idle, webhooks on: porter ÷ the floor of its reads and safety-net pulls`,
            'ratio',
            roundAll(webhookFull.ratios, 2),
            { value: round(webhookFull.ratio, 2) },
          ),
          figure('fleet.rss', `${SERVERS} servers: RSS`, 'MB', [round(rssMb, 1)], {
            target: { op: '<=', value: 200, text: '≤ 200 MB' },
          }),
          // One sample lands wherever the collector's cycle stands; the peak is what a container's memory limit must allow.
          figure('fleet.rssPeak', `${SERVERS} servers: peak RSS (VmHWM) from the start to the end of the idle span`, 'MB', [
            round(idle.peakRssMb, 1),
          ]),
          figure('fleet.burstRun', `${SERVERS} servers: one purchase each → all run`, 'ms', [burstRunMs]),
          figure('fleet.burstReported', `${SERVERS} servers: one purchase each → all reported done`, 'ms', [burstReportedMs], {
            target: { op: '<=', value: 2000, text: '≤ 2 s' },
          }),
        ],
        detail: {
          servers: SERVERS,
          gameServers: GAME_SERVERS,
          idleSeconds: round(seconds, 1),
          idleCpuUserMs: round(idle.userMs),
          idleCpuSystemMs: round(idle.systemMs),
          // The simulators run in the harness: when they saturate a core, porter's calls wait on them.
          harnessIdleCpuPercent: round(idle.harnessPercent, 1),
          burstRunWithin30s: burstRan,
          burstReportedWithin30s: burstReported,
          idleApiCalls: idle.requests,
          idleApiCallsPerSecond: round(idle.requests / seconds),
          idle429: idle.tooMany,
          idleRconCommandsPerSecond: round(idle.rconPerSecond),
          webhookIdleCpuUserMs: round(pushed.userMs),
          webhookIdleCpuSystemMs: round(pushed.systemMs),
          webhookIdleApiCallsPerMinutePerServer: round(pushed.callsPerServer * 60, 2),
          webhookIdleRconCommandsPerSecond: round(pushed.rconPerSecond),
          webhookRssMb: round(pushed.rssMb, 1),
          webhookPeakRssMb: round(pushed.peakRssMb, 1),
          apiConnections: api.connections,
          // The idle span alone, before the floor ran beside it: porter's CPU with the machine to itself.
          idleSpanCpuPercent: round(idleCpuPercent, 2),
          webhookIdleSpanCpuPercent: round(pushed.idleCpuPercent, 2),
          pollingFloorCpuPercent: round(polling.floorPercent, 2),
          webhookFloorCpuPercent: round(webhookReads.floorPercent, 2),
          pollingScheduledFloorCpuPercent: round(pollingScheduled.floorPercent, 2),
          webhookScheduledFloorCpuPercent: round(webhookReadsScheduled.floorPercent, 2),
          webhookFloorScheduleCost: round(webhookReads.ratio / webhookReadsScheduled.ratio, 2),
          webhookFullFloorCpuPercent: round(webhookFull.floorPercent, 2),
        },
      };
    } finally {
      await porter?.stop();
      await Promise.allSettled([api.close(), scene.floorApi.close(), ...[...games, ...scene.floorGames].map((g) => g.close())]);
      if (context.keep) context.progress(`  kept ${scene.dir}`);
      else rmSync(scene.dir, { recursive: true, force: true });
    }
  },
};

function roundAll(values: readonly number[], digits = 1): number[] {
  return values.map((value) => round(value, digits));
}

/**
 * porter's floor (bench/fleet-floor.ts: the same calls made by a program that decides nothing) run
 * on its own simulators beside the porter `p` that is idling, measured slice by slice with it.
 */
function besideFloorOf(scene: Scene, context: BenchContext, apiConnections: number) {
  const { floorApi, floorGames } = scene;
  const floorSaw = () => ({ api: floorApi.requests.length, rcon: floorGames.reduce((sum, g) => sum + g.executed.length, 0) });
  return async (
    what: string,
    p: PorterProcess,
    pullsPerSecond: number,
    readsPerSecond: number,
    slice: Slicing,
    schedule: FloorSchedule,
  ) => {
    const floor = await startFloor({
      schedule,
      apiUrl: floorApi.url,
      serverIdPrefix: ID_PREFIX,
      servers: SERVERS,
      pullsPerSecond,
      readsPerSecond,
      apiConnections,
      gamePorts: floorGames.map((g) => g.port),
      rconPassword: scene.password,
    });
    try {
      await sleep(5_000);
      const slices = context.quick ? slice.quick : slice.record;
      const measured = await sideBySide(
        () => {
          const { user, system } = p.cpuTimes();
          return user + system;
        },
        floor,
        floorSaw,
        slices,
        slice.seconds,
      );
      context.progress(
        `  beside its floor, ${what}: porter ${round(measured.porterPercent, 1)} %, floor ${round(measured.floorPercent, 1)} % of a core, ` +
          `porter ÷ floor ${round(measured.ratio, 2)} (slices ${roundAll(measured.ratios, 2).join(', ')}); ` +
          `the floor made ${round(measured.floorPullsPerSecond)} pulls/s and ${round(measured.floorReadsPerSecond)} player-list reads/s (asked: ${round(pullsPerSecond)} and ${round(readsPerSecond)})`,
      );
      return measured;
    } finally {
      await floor.stop();
    }
  };
}

interface IdleSpan {
  readonly seconds: number;
  readonly idleCpuPercent: number;
  readonly userMs: number;
  readonly systemMs: number;
  readonly callsPerServer: number;
  readonly requests: number;
  readonly tooMany: number;
  readonly rconPerSecond: number;
  readonly rssMb: number;
  /** VmHWM at the end of the span: the peak since the process started, connecting included. */
  readonly peakRssMb: number;
  readonly harnessPercent: number;
}

/** porter's own CPU (utime + stime) over `idleSeconds`, and what the simulators saw meanwhile. */
async function measureIdle(p: PorterProcess, api: FakeSellerApi, games: readonly FakeRconServer[], idleSeconds: number): Promise<IdleSpan> {
  const cpu0 = p.cpuTimes();
  const harness0 = process.cpuUsage();
  const at0 = Date.now();
  const requests0 = api.requests.length;
  const queries0 = games.reduce((sum, g) => sum + g.executed.length, 0);
  await sleep(idleSeconds * 1000);
  const cpu1 = p.cpuTimes();
  const harness = process.cpuUsage(harness0);
  const seconds = (Date.now() - at0) / 1000;
  const idleRequests = api.requests.slice(requests0);
  const queries = games.reduce((sum, g) => sum + g.executed.length, 0) - queries0;
  const userMs = cpu1.user - cpu0.user;
  const systemMs = cpu1.system - cpu0.system;
  return {
    seconds,
    idleCpuPercent: ((userMs + systemMs) / (seconds * 1000)) * 100,
    userMs,
    systemMs,
    callsPerServer: idleRequests.length / seconds / SERVERS,
    requests: idleRequests.length,
    tooMany: idleRequests.filter((r) => r.status === 429).length,
    rconPerSecond: queries / seconds,
    rssMb: p.rssKb() / 1024,
    peakRssMb: p.peakRssKb() / 1024,
    harnessPercent: ((harness.user + harness.system) / 1000 / (seconds * 1000)) * 100,
  };
}
