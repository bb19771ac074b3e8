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
}

/** What the simulators saw: API requests and game-server commands, counted since they started. */
type Seen = () => { readonly api: number; readonly rcon: number };

/**
 * The floor process (bench/fleet-floor.ts) making `calls` for `seconds` after a settling span, as
 * porter's idle span is measured: its CPU as % of one core, and the calls per second the
 * simulators saw from it meanwhile (`seen`), which say whether it kept the pace it was asked for.
 */
export async function measureFloor(
  calls: FloorCalls,
  seconds: number,
  settleMs: number,
  seen: Seen,
): Promise<{ cpuPercent: number; pullsPerSecond: number; readsPerSecond: number }> {
  const args = [
    FLOOR,
    calls.apiUrl,
    calls.serverIdPrefix,
    String(calls.servers),
    String(calls.pullsPerSecond),
    String(calls.readsPerSecond),
    String(Math.max(1, calls.apiConnections)),
    calls.gamePorts.join(','),
  ];
  const child = spawn(process.execPath, args, {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, BENCH_API_TOKEN: SIM_TOKEN, BENCH_RCON_PASSWORD: calls.rconPassword },
  });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    await until(() => out.includes('ready') || child.exitCode !== null, 'the floor to log in everywhere', {
      timeoutMs: 60_000,
      intervalMs: 10,
    });
    if (child.exitCode !== null) throw new Error(`the fleet floor exited ${child.exitCode} before it was ready`);
    await sleep(settleMs);
    const pid = child.pid!;
    const cpu0 = cpuMs(pid);
    const seen0 = seen();
    const at0 = performance.now();
    await sleep(seconds * 1000);
    const spent = cpuMs(pid) - cpu0;
    const seen1 = seen();
    const elapsed = (performance.now() - at0) / 1000;
    return {
      cpuPercent: (spent / (elapsed * 1000)) * 100,
      pullsPerSecond: (seen1.api - seen0.api) / elapsed,
      readsPerSecond: (seen1.rcon - seen0.rcon) / elapsed,
    };
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
}
