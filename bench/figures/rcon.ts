import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { startRconServer } from '../../src/sim/rcon-server.js';
import { figure, type BenchResult, type Figure } from '../lib/figure.js';
import { round } from '../lib/stats.js';
import type { Benchmark, BenchContext } from '../lib/context.js';

/**
 * RCON round trips per second on one connection: porter's RconExecutor against a minimal
 * hand-written raw-socket loop that sends the same packets, taking turns in short slices in one
 * child process, against the same fake server (in the harness).
 */

const CLIENT = fileURLToPath(new URL('../rcon-client.js', import.meta.url));
const FLAVOURS = ['minecraft', 'source'] as const;

type Rates = { porter: number; raw: number };

/** One client process: porter's executor and the raw loop in alternating slices, round trips per second of each. */
function measure(flavour: string, port: number, password: string, durationMs: number): Promise<Rates> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLIENT, flavour, String(port), String(durationMs)], {
      stdio: ['ignore', 'pipe', 'inherit'],
      env: { ...process.env, BENCH_RCON_PASSWORD: password },
    });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
    const timer = setTimeout(() => child.kill('SIGKILL'), 2 * durationMs + 20_000);
    child.once('error', reject);
    child.once('exit', (code) => {
      clearTimeout(timer);
      try {
        if (code !== 0) throw new Error(`exit ${code}`);
        const totals = JSON.parse(out) as Record<keyof Rates, { roundTrips: number; ms: number }>;
        resolve({ porter: (totals.porter.roundTrips * 1000) / totals.porter.ms, raw: (totals.raw.roundTrips * 1000) / totals.raw.ms });
      } catch (error) {
        reject(new Error(`benchmark: the RCON client (${flavour}) failed: ${(error as Error).message}; output: ${out.slice(0, 500)}`));
      }
    });
  });
}

export const rcon: Benchmark = {
  name: 'rcon',
  description: "RCON round trips per second on one connection: porter's RconExecutor vs a raw-socket loop",
  async run(context: BenchContext): Promise<BenchResult> {
    // Loopback round trips on a shared 2-core VM swing by 2× from one second to the next, so
    // each run takes turns between the two clients in slices of 100 ms (bench/rcon-client.ts).
    const runs = context.quick ? 2 : 5;
    const durationMs = 2000;
    const figures: Figure[] = [];
    const detail: Record<string, unknown> = { command: 'say bench', durationMs };
    for (const flavour of FLAVOURS) {
      const password = randomBytes(12).toString('hex');
      const game = await startRconServer({ password, flavour });
      const porter: number[] = [];
      const raw: number[] = [];
      try {
        for (let i = 0; i < runs; i++) {
          const rates = await measure(flavour, game.port, password, durationMs);
          porter.push(rates.porter);
          raw.push(rates.raw);
        }
      } finally {
        await game.close();
      }
      const ratios = porter.map((p, i) => round(p / raw[i]!, 3));
      context.progress(
        `  ${flavour}: porter ${porter.map((r) => round(r)).join(' / ')} /s, raw ${raw.map((r) => round(r)).join(' / ')} /s`,
      );
      figures.push(
        figure(`rcon.${flavour}.ratio`, `RCON ${flavour}: porter ÷ raw socket`, 'ratio', ratios, {
          target: { op: '>=', value: 0.8, text: '≥ 0.8' },
        }),
        figure(
          `rcon.${flavour}.porter`,
          `RCON ${flavour}: porter round trips`,
          '/s',
          porter.map((r) => round(r)),
        ),
        figure(
          `rcon.${flavour}.raw`,
          `RCON ${flavour}: raw-socket round trips`,
          '/s',
          raw.map((r) => round(r)),
        ),
      );
      detail[flavour] = { porter: porter.map((r) => round(r)), raw: raw.map((r) => round(r)), ratios };
    }
    return { name: this.name, figures, detail };
  },
};
