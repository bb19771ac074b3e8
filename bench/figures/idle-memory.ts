import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { pino } from 'pino';
import type { PullResult, ServerApi } from '../../src/api/types.js';
import type { Clock } from '../../src/clock.js';
import { Journal } from '../../src/delivery/journal/journal.js';
import { DeliveryLoop } from '../../src/delivery/loop.js';
import type { Executor } from '../../src/protocols/executor.js';
import { figure, type BenchResult } from '../lib/figure.js';
import type { Benchmark, BenchContext } from '../lib/context.js';

/**
 * Idle memory: the real delivery loop, in this process, pulling from an API that never has
 * anything due, for hundreds of thousands of idle pulls (days of a real porter's idling, at one
 * pull every ~0.7 s). Its clock's sleeps end on the next turn of the event loop, so the run takes
 * seconds. The heap is read after full collections at a checkpoint early on and at the end: what
 * is retained per idle pull shows as growth. A composite AbortSignal per idle pull, kept alive by
 * the long-lived stop signal (nodejs/node#55351), once grew the heap by ~65 bytes a pull.
 */

const CHECKPOINT = 20_000;

/** Sleeps that end on the next turn of the event loop, whatever their length. */
const instantClock: Clock = {
  now: () => Date.now(),
  sleep: (_ms, signal) =>
    new Promise<void>((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const onAbort = () => {
        clearImmediate(timer);
        reject(signal?.reason);
      };
      const timer = setImmediate(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      });
      signal?.addEventListener('abort', onAbort, { once: true });
    }),
};

function collectedHeap(gc: () => void): number {
  for (let i = 0; i < 3; i++) gc();
  return process.memoryUsage().heapUsed;
}

async function idleRun(pulls: number, gc: () => void): Promise<{ earlyBytes: number; lateBytes: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'porter-bench-idle-'));
  const stop = new AbortController();
  let count = 0;
  let earlyBytes = 0;
  let resolveDone!: () => void;
  const done = new Promise<void>((resolve) => (resolveDone = resolve));
  const api: ServerApi = {
    serverId: 'bench',
    pull: async (): Promise<PullResult> => {
      count++;
      if (count === CHECKPOINT) earlyBytes = collectedHeap(gc);
      if (count === pulls) resolveDone();
      return { kind: 'empty', status: 204 };
    },
    done: async () => 'accepted',
    fail: async () => 'accepted',
  };
  const executor: Executor = {
    connectedText: 'a script',
    connect: async () => undefined,
    isReady: () => true,
    waitReady: async () => undefined,
    execute: async () => '',
    query: async () => '',
    stats: () => ({ connected: true, reconnects: 0 }),
    close: async () => undefined,
  };
  const journal = new Journal(dir);
  const loop = new DeliveryLoop({
    serverId: 'bench',
    api,
    executor,
    players: { get: async () => [] },
    journal,
    policy: { check: () => ({ ok: true }) },
    failureIn: () => null,
    idleDelay: () => 667,
    pullDelay: () => 0,
    notSentRetryMs: 20_000,
    clock: instantClock,
    logger: pino({ level: 'silent' }),
  });
  const running = loop.run({ stop: stop.signal, hard: new AbortController().signal });
  await done;
  const lateBytes = collectedHeap(gc);
  stop.abort();
  await running;
  journal.close();
  rmSync(dir, { recursive: true, force: true });
  return { earlyBytes, lateBytes };
}

export const idleMemory: Benchmark = {
  name: 'idle-memory',
  description: 'heap retained by the delivery loop over hundreds of thousands of idle pulls (in-process)',
  async run(context: BenchContext): Promise<BenchResult> {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const pulls = context.quick ? 100_000 : 300_000;
    const runs = context.quick ? 1 : 3;
    const growth: number[] = [];
    const perPull: number[] = [];
    for (let run = 0; run < runs; run++) {
      context.progress(`idle-memory: run ${run + 1}/${runs}, ${pulls} idle pulls`);
      const { earlyBytes, lateBytes } = await idleRun(pulls, gc);
      growth.push(Math.round(((lateBytes - earlyBytes) / 1024 / 1024) * 100) / 100);
      perPull.push(Math.round(((lateBytes - earlyBytes) / (pulls - CHECKPOINT)) * 100) / 100);
    }
    return {
      name: 'idle-memory',
      figures: [
        figure(
          'idle-memory.growth',
          `heap growth from idle pull ${CHECKPOINT.toLocaleString('en')} to ${pulls.toLocaleString('en')}`,
          'MB',
          growth,
          {
            target: { op: '<', value: 1, text: '< 1 MB (flat)' },
          },
        ),
        figure('idle-memory.per-pull', 'heap retained per idle pull', 'bytes', perPull),
      ],
      detail: { pulls, checkpoint: CHECKPOINT },
    };
  },
};
