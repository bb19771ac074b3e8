import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { SIM_TOKEN } from '../../src/sim/seller-api.js';
import { cpuMs } from './proc.js';
import { sleep, until } from './wait.js';

const FLOOR = fileURLToPath(new URL('../fleet-floor.js', import.meta.url));

interface FloorCalls {
  readonly apiUrl: string;
  readonly serverIdPrefix: string;
  readonly servers: number;
  readonly pullsPerSecond: number;
  readonly readsPerSecond: number;
  readonly apiConnections: number;
  readonly gamePorts: readonly number[];
  readonly rconPassword: string;
  /** `tick`: everything due on one 20 ms interval; `per-server`: a timer per server, as porter's loops (bench/fleet-floor.ts). */
  readonly schedule: FloorSchedule;
}

export type FloorSchedule = 'tick' | 'per-server';

/** What the floor's simulators saw: API requests and game-server commands, counted since they started. */
type Seen = () => { readonly api: number; readonly rcon: number };

interface RunningFloor {
  readonly pid: number;
  stop(): Promise<void>;
}

/** The floor process (bench/fleet-floor.ts) making `calls`, once it has logged in everywhere. */
export async function startFloor(calls: FloorCalls): Promise<RunningFloor> {
  const args = [
    FLOOR,
    calls.apiUrl,
    calls.serverIdPrefix,
    String(calls.servers),
    String(calls.pullsPerSecond),
    String(calls.readsPerSecond),
    String(Math.max(1, calls.apiConnections)),
    calls.gamePorts.join(','),
    calls.schedule,
  ];
  const child = spawn(process.execPath, args, {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, BENCH_API_TOKEN: SIM_TOKEN, BENCH_RCON_PASSWORD: calls.rconPassword },
  });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
  };
  try {
    await until(() => out.includes('ready') || child.exitCode !== null, 'the floor to log in everywhere', {
      timeoutMs: 60_000,
      intervalMs: 10,
    });
  } catch (error) {
    await stop();
    throw error;
  }
  if (child.exitCode !== null) throw new Error(`the fleet floor exited ${child.exitCode} before it was ready`);
  return { pid: child.pid!, stop };
}

interface SideBySide {
  /** porter's CPU in each slice, % of one core. */
  readonly porter: number[];
  /** The floor's CPU in the same slices. */
  readonly floor: number[];
  /** porter ÷ floor, slice by slice. */
  readonly ratios: number[];
  /** porter ÷ floor over all the slices together. */
  readonly ratio: number;
  /** Over all the slices together, % of one core. */
  readonly porterPercent: number;
  readonly floorPercent: number;
  /** What the floor's simulators saw from it: whether it kept the pace it was asked for. */
  readonly floorPullsPerSecond: number;
  readonly floorReadsPerSecond: number;
}

/**
 * porter and its floor measured at the same time, in `slices` slices of `sliceSeconds`: each on
 * its own simulators, both under whatever else the machine is doing in that second, so that the
 * ratio holds where absolute CPU moves 1.7× from one day to the next (and, on one day, between two
 * spans measured one after the other: 1.34 and 2.15 for the same build when they were).
 */
export async function sideBySide(
  porterCpuMs: () => number,
  floor: RunningFloor,
  floorSaw: Seen,
  slices: number,
  sliceSeconds: number,
): Promise<SideBySide> {
  const porter: number[] = [];
  const floorCpu: number[] = [];
  const seen0 = floorSaw();
  const at0 = performance.now();
  let porterMs = 0;
  let floorMs = 0;
  let sliceMs = 0;
  for (let slice = 0; slice < slices; slice++) {
    const p0 = porterCpuMs();
    const f0 = cpuMs(floor.pid);
    const t0 = performance.now();
    await sleep(sliceSeconds * 1000);
    const p = porterCpuMs() - p0;
    const f = cpuMs(floor.pid) - f0;
    const elapsedMs = performance.now() - t0;
    porter.push((p / elapsedMs) * 100);
    floorCpu.push((f / elapsedMs) * 100);
    porterMs += p;
    floorMs += f;
    sliceMs += elapsedMs;
  }
  const seen1 = floorSaw();
  const elapsed = (performance.now() - at0) / 1000;
  return {
    porter,
    floor: floorCpu,
    ratios: porter.map((value, i) => value / floorCpu[i]!),
    ratio: porterMs / floorMs,
    porterPercent: (porterMs / sliceMs) * 100,
    floorPercent: (floorMs / sliceMs) * 100,
    floorPullsPerSecond: (seen1.api - seen0.api) / elapsed,
    floorReadsPerSecond: (seen1.rcon - seen0.rcon) / elapsed,
  };
}
