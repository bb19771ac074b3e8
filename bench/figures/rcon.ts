import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { startRconServer } from '../../src/fakes/rcon-server.js';
import { figure, type BenchResult, type Figure } from '../lib/figure.js';
import { round } from '../lib/stats.js';
import type { Benchmark, BenchContext } from '../lib/context.js';

/**
 * RCON round trips per second on one connection: porter's RconExecutor against a minimal
 * hand-written raw-socket loop, both in a child process of their own, against the same fake
 * server (in the harness), one after the other, alternating which goes first.
 */

const CLIENT = fileURLToPath(new URL('../rcon-client.js', import.meta.url));
const FLAVOURS = ['minecraft', 'source'] as const;

function measure(mode: 'porter' | 'raw', flavour: string, port: number, password: string, durationMs: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLIENT, mode, flavour, String(port), String(durationMs)], {
      stdio: ['ignore', 'pipe', 'inherit'],
      env: { ...process.env, BENCH_RCON_PASSWORD: password },
    });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
    const timer = setTimeout(() => child.kill('SIGKILL'), durationMs + 20_000);
    child.once('error', reject);
    child.once('exit', (code) => {
      clearTimeout(timer);
      try {
        const { roundTrips, ms } = JSON.parse(out) as { roundTrips: number; ms: number };
        if (code !== 0) throw new Error(`exit ${code}`);
        resolve((roundTrips * 1000) / ms);
      } catch (error) {
        reject(
          new Error(`benchmark: the ${mode} RCON client (${flavour}) failed: ${(error as Error).message}; output: ${out.slice(0, 500)}`),
        );
      }
    });
  });
}

export const rcon: Benchmark = {
  name: 'rcon',
  description: "RCON round trips per second on one connection: porter's RconExecutor vs a raw-socket loop",
  async run(context: BenchContext): Promise<BenchResult> {
    // Loopback round trips on a shared 2-core VM swing by 2× from one second to the next:
    // several short alternating runs beat a few long ones.
    const runs = context.quick ? 2 : 5;
    const durationMs = 1000;
    const figures: Figure[] = [];
    const detail: Record<string, unknown> = { command: 'say bench', durationMs };
    for (const flavour of FLAVOURS) {
      const password = randomBytes(12).toString('hex');
      const game = await startRconServer({ password, flavour });
      const porter: number[] = [];
      const raw: number[] = [];
      try {
        for (let i = 0; i < runs; i++) {
          // Alternate the order so neither always runs on a warmer machine.
          if (i % 2 === 0) {
            porter.push(await measure('porter', flavour, game.port, password, durationMs));
            raw.push(await measure('raw', flavour, game.port, password, durationMs));
          } else {
            raw.push(await measure('raw', flavour, game.port, password, durationMs));
            porter.push(await measure('porter', flavour, game.port, password, durationMs));
          }
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
