import { NotSentError, OutcomeUnknownError } from '../../src/errors.js';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { pino } from 'pino';
import { ApiServerError, ApiTransportError, RateLimitedError } from '../../src/api/errors.js';
import type { PullResult, ReportResult, ServerApi } from '../../src/api/types.js';
import { Journal, readJournal } from '../../src/delivery/journal/journal.js';
import { DeliveryLoop } from '../../src/delivery/loop.js';
import { type Executor } from '../../src/protocols/executor.js';
import { FakeClock, runClockUntil } from '../helpers/fake-clock.js';
import { fcOptions } from '../helpers/fc-options.js';
import { FaultyFs } from '../helpers/faulty-fs.js';

/**
 * The delivery loop in a hostile world, on a fake clock: a platform that hands settled ids out
 * again, answers 429 / 5xx, loses answers after acting on them; a game server that drops
 * connections or never answers; a disk that refuses writes; and the process killed at any
 * numbered step, then started again on the same state directory. Whatever happens:
 * - no command is run twice, and none is sent before its claim is on disk;
 * - every command porter learned of is settled on the platform in the end (a pull answer lost
 *   before porter read it is the claim gap, which no connector can close, and is excluded);
 * - a command reported done was run.
 */

const SERVER = '1b4e28ba-2fa1-11d2-883f-0016d3cca427';
const CONTEXT = { route: 'pull' as const, serverId: SERVER };
const PROBLEM = { apiCode: undefined, detail: undefined, requiredScope: undefined, traceId: undefined };

type PullFault = 'none' | 'repeat-settled' | 'lost-after-claim' | '429' | '5xx' | 'unusable';
type ReportFault = 'none' | '5xx' | 'lost-after-accept';
type ExecFault = 'none' | 'game-fails' | 'not-sent' | 'no-answer';

interface Plan {
  readonly commands: number;
  readonly pulls: readonly PullFault[];
  readonly reports: readonly ReportFault[];
  readonly execs: readonly ExecFault[];
  /** Journal writes that fail, by their number on the disk of the first life. */
  readonly diskFailures: ReadonlyMap<number, string>;
  /** The first life dies at this journal write (a torn write included). */
  readonly diskDeath: number | undefined;
  /** The first life's disk is full from this write on, for `fullForMs` of (fake) time. */
  readonly fullFrom: number | undefined;
  readonly fullForMs: number;
  /** Kill the process at this step of the world (every API call, execution and disk write is a step). */
  readonly crashes: readonly number[];
  readonly retryAfterMs: number;
}

type CommandState = 'scheduled' | 'processing' | 'settled' | 'gap';

/** The platform's side: what the Seller API knows of each command. */
class Platform {
  readonly state = new Map<string, CommandState>();
  readonly accepted = new Map<string, 'done' | 'fail'>();
  readonly learned = new Set<string>();
  processing: string | undefined;

  constructor(count: number) {
    for (let i = 1; i <= count; i++) this.state.set(String(1000 + i), 'scheduled');
  }

  get drained(): boolean {
    return this.processing === undefined && [...this.state.values()].every((s) => s === 'settled' || s === 'gap');
  }

  claimNext(): string | undefined {
    if (this.processing !== undefined) return undefined;
    const next = [...this.state].find(([, s]) => s === 'scheduled')?.[0];
    if (next !== undefined) {
      this.state.set(next, 'processing');
      this.processing = next;
    }
    return next;
  }

  readonly reasons = new Map<string, string>();

  report(id: string, result: 'done' | 'fail', reason?: string): ReportResult {
    if (this.state.get(id) !== 'processing') return { kind: 'alreadySettled', status: 409, apiCode: 'COMMAND_NOT_PROCESSING' };
    this.state.set(id, 'settled');
    if (reason !== undefined) this.reasons.set(id, reason);
    this.accepted.set(id, result);
    if (this.processing === id) this.processing = undefined;
    return 'accepted';
  }

  /** A lost pull answer: the platform keeps the command until its own timeout, then lets the next go. */
  lose(id: string): void {
    this.state.set(id, 'gap');
    if (this.processing === id) this.processing = undefined;
  }
}

/** One life of the process. Once killed (at a step, or by its disk at a write), everything it calls hangs. */
class Life {
  killed = false;
  /** The last id a pull handed to this life. */
  lastHanded: string | undefined;
  readonly disk: FaultyFs;
  constructor(diskFailures: ReadonlyMap<number, string>, diskDeath: number | undefined, fullFrom?: number) {
    this.disk = new FaultyFs({
      failAt: diskFailures,
      dieAt: diskDeath,
      tornFraction: 0.5,
      ...(fullFrom === undefined ? {} : { fullFrom }),
    });
  }
  /** When the disk became full (fake time), while it is. */
  fullSince: number | undefined;
  get dead(): boolean {
    return this.killed || this.disk.dead;
  }
}

const hang = () => new Promise<never>(() => undefined);

class World {
  readonly platform: Platform;
  readonly runs = new Map<string, number>();
  readonly violations: string[] = [];
  step = 0;
  readonly #plan: Plan;
  #pull = 0;
  #report = 0;
  #exec = 0;
  life: Life | undefined;
  notReadyUntil = 0;

  constructor(
    plan: Plan,
    readonly clock: FakeClock,
    readonly dir: string,
  ) {
    this.#plan = plan;
    this.platform = new Platform(plan.commands);
  }

  /** Counts a step; true when the process must die at it. */
  #tick(): boolean {
    const step = this.step++;
    return this.#plan.crashes.includes(step);
  }

  #kill(life: Life): void {
    life.killed = true;
    life.disk.dead = true;
  }

  api(life: Life): ServerApi {
    const plan = this.#plan;
    const platform = this.platform;
    return {
      serverId: SERVER,
      pull: async (): Promise<PullResult> => {
        if (life.dead) return hang();
        const fault = plan.pulls[this.#pull++] ?? 'none';
        const dies = this.#tick();
        if (fault === '429') throw new RateLimitedError('429', { status: 429, ...PROBLEM, retryAfterMs: plan.retryAfterMs }, CONTEXT);
        if (fault === '5xx') throw new ApiServerError('503', { status: 503, ...PROBLEM, retryAfterMs: undefined }, CONTEXT);
        if (fault === 'unusable') return { kind: 'unusable', reason: 'id is not an integer' };
        if (fault === 'repeat-settled') {
          const settled = [...platform.state].find(([, s]) => s === 'settled')?.[0];
          if (settled !== undefined && !dies) {
            platform.learned.add(settled);
            return { kind: 'claimed', id: settled, command: `give player${settled} diamond 1` };
          }
        }
        const id = platform.claimNext();
        if (dies || fault === 'lost-after-claim') {
          if (id !== undefined) platform.lose(id);
          if (dies) {
            this.#kill(life);
            return hang();
          }
          throw new ApiTransportError('reset', { failure: 'reset', maybeProcessed: true, context: CONTEXT });
        }
        if (id === undefined) return { kind: 'empty', status: 204 };
        platform.learned.add(id);
        life.lastHanded = id;
        return { kind: 'claimed', id, command: `give player${id} diamond 1` };
      },
      done: async (id) => this.#reportCall(life, id, 'done'),
      fail: async (id, reason) => this.#reportCall(life, id, 'fail', reason),
    };
  }

  async #reportCall(life: Life, id: string, result: 'done' | 'fail', reason?: string): Promise<ReportResult> {
    if (life.dead) return hang();
    const fault = this.#plan.reports[this.#report++] ?? 'none';
    const dies = this.#tick();
    if (fault === '5xx' && !dies) throw new ApiServerError('503', { status: 503, ...PROBLEM, retryAfterMs: undefined }, CONTEXT);
    const answer = this.platform.report(id, result, reason);
    if (dies) {
      this.#kill(life);
      return hang();
    }
    if (fault === 'lost-after-accept') throw new ApiTransportError('reset', { failure: 'reset', maybeProcessed: true, context: CONTEXT });
    return answer;
  }

  executor(life: Life): Executor {
    return {
      connectedText: 'a fake game server',
      connect: async () => undefined,
      isReady: () => this.clock.now() >= this.notReadyUntil,
      waitReady: async (signal?: AbortSignal) => {
        if (life.dead) return hang();
        while (this.clock.now() < this.notReadyUntil) await this.clock.sleep(this.notReadyUntil - this.clock.now(), signal);
      },
      execute: async (command: string, context: { id: string }) => {
        if (life.dead) return hang();
        const fault = this.#plan.execs[this.#exec++] ?? 'none';
        if (this.#tick()) {
          // Killed while the command was on its way: it may have run.
          this.#ran(context.id);
          this.#kill(life);
          return hang();
        }
        if (fault === 'not-sent' || this.clock.now() < this.notReadyUntil) {
          this.notReadyUntil = this.clock.now() + 50;
          throw new NotSentError('connection is down');
        }
        this.#ran(context.id);
        if (fault === 'no-answer') throw new OutcomeUnknownError('no answer within 5000 ms');
        return fault === 'game-fails' ? 'No player was found' : `Gave 1 diamond to ${command}`;
      },
      query: async () => '',
      stats: () => ({ connected: true, reconnects: 0 }),
      close: async () => undefined,
    };
  }

  /**
   * A life that died after a pull handed it a command but before the claim reached the disk left
   * that command in the claim gap: the platform holds it until its own timeout. Only that one
   * command is excused, and only if nothing of it is on disk.
   */
  #excuseClaimGap(life: Life): void {
    const id = life.lastHanded;
    if (id === undefined || this.platform.state.get(id) !== 'processing') return;
    if (readJournal(this.dir).some((entry) => entry.id === id)) return;
    this.platform.lose(id);
    this.platform.learned.delete(id);
  }

  #ran(id: string): void {
    this.runs.set(id, (this.runs.get(id) ?? 0) + 1);
    if (!readJournal(this.dir).some((entry) => entry.id === id))
      this.violations.push(`command ${id} was sent before its claim was on disk`);
  }

  /** Starts a life: a new journal and loop on the same directory, as a restarted process. */
  /** Frees a full disk once its time is up: deliveries must then resume by themselves. */
  freeDisk(): void {
    const life = this.life;
    if (!life || life.disk.refuseWith === undefined) return;
    life.fullSince ??= this.clock.now();
    if (this.clock.now() - life.fullSince >= this.#plan.fullForMs) life.disk.refuseWith = undefined;
  }

  start(
    diskFailures: ReadonlyMap<number, string>,
    diskDeath: number | undefined,
    fullFrom?: number,
  ): { life: Life; loop: Promise<void>; stop: AbortController } | undefined {
    if (this.life?.dead) this.#excuseClaimGap(this.life);
    const life = new Life(diskFailures, diskDeath, fullFrom);
    this.life = life;
    let journal: Journal;
    try {
      journal = new Journal(this.dir, { files: life.disk.files(), now: () => this.clock.now() });
    } catch {
      life.killed = true;
      return undefined;
    }
    const loop = new DeliveryLoop({
      serverId: SERVER,
      api: this.api(life),
      executor: this.executor(life),
      players: { get: async () => [] },
      journal,
      policy: { check: () => ({ ok: true }) },
      failureIn: (answer) => (answer.includes('No player was found') ? answer : null),
      idleDelay: () => 1000,
      pullDelay: () => 0,
      notSentRetryMs: 200,
      clock: this.clock,
      logger: pino({ level: 'silent' }),
    });
    const stop = new AbortController();
    const running = loop.run({ stop: stop.signal, hard: new AbortController().signal }).catch((error: unknown) => {
      if (!life.dead) this.violations.push(`the loop stopped on ${String(error)}`);
    });
    return { life, loop: running, stop };
  }
}

/** Runs the fake clock until `done` holds (or the bound passes); the world frees its disk between steps. */
function runUntil(clock: FakeClock, done: () => boolean, boundMs: number, world?: World): Promise<boolean> {
  return runClockUntil(clock, done, boundMs, () => world?.freeDisk());
}

const plan: fc.Arbitrary<Plan> = fc.record({
  commands: fc.integer({ min: 1, max: 8 }),
  pulls: fc.array(fc.constantFrom<PullFault>('none', 'none', 'repeat-settled', 'lost-after-claim', '429', '5xx', 'unusable'), {
    maxLength: 30,
  }),
  reports: fc.array(fc.constantFrom<ReportFault>('none', 'none', '5xx', 'lost-after-accept'), { maxLength: 20 }),
  execs: fc.array(fc.constantFrom<ExecFault>('none', 'none', 'game-fails', 'not-sent', 'no-answer'), { maxLength: 12 }),
  diskFailures: fc
    .uniqueArray(fc.tuple(fc.nat({ max: 60 }), fc.constantFrom('ENOSPC', 'EIO', 'EROFS')), { selector: ([at]) => at, maxLength: 4 })
    .map((pairs) => new Map(pairs)),
  diskDeath: fc.option(fc.nat({ max: 80 }), { nil: undefined }),
  fullFrom: fc.option(fc.nat({ max: 60 }), { nil: undefined }),
  fullForMs: fc.integer({ min: 0, max: 20_000 }),
  crashes: fc.uniqueArray(fc.nat({ max: 60 }), { maxLength: 3 }),
  retryAfterMs: fc.constantFrom(0, -5, 1, 1500, 60_000),
});

describe('delivery loop in a hostile world (property)', () => {
  test('never twice, never lost, never sent before the claim is durable — across faults and kills', async () => {
    await fc.assert(
      fc.asyncProperty(plan, async (p) => {
        const dir = mkdtempSync(join(tmpdir(), 'porter-loop-prop-'));
        const clock = new FakeClock();
        const world = new World(p, clock, dir);
        try {
          // Each kill ends a life; the next life starts on the same directory with a healthy disk.
          for (let life = 0; life <= p.crashes.length + 1; life++) {
            const started = life === 0 ? world.start(p.diskFailures, p.diskDeath, p.fullFrom) : world.start(new Map(), undefined);
            if (!started) continue;
            const finished = await runUntil(
              clock,
              () => started.life.dead || (world.platform.drained && allReported(dir)),
              3_600_000,
              world,
            );
            if (!started.life.dead) {
              assert.ok(
                finished,
                `life ${life} did not drain the queue within an hour of fake time: ${JSON.stringify([...world.platform.state])}`,
              );
              started.stop.abort();
              await runUntil(clock, () => false, 5_000);
              break;
            }
          }
          assert.deepEqual(world.violations, []);
          for (const [id, count] of world.runs) assert.ok(count <= 1, `command ${id} ran ${count} times`);
          for (const id of world.platform.learned) {
            assert.equal(world.platform.state.get(id), 'settled', `command ${id} was claimed by porter but never settled`);
          }
          for (const [id, result] of world.platform.accepted) {
            if (result === 'done') assert.equal(world.runs.get(id), 1, `command ${id} reported done but never ran`);
          }
          // A disk that refuses writes costs at most the one claim in hand per failure, never a run of purchases.
          const notRun = [...world.platform.reasons.values()].filter((reason) =>
            reason.startsWith('not run: porter could not record the claim'),
          ).length;
          const diskTroubles = p.diskFailures.size + (p.fullFrom === undefined ? 0 : 1);
          assert.ok(notRun <= diskTroubles, `${notRun} purchases failed for ${diskTroubles} disk failures`);
        } finally {
          rmSync(dir, { recursive: true, force: true });
        }
      }),
      fcOptions({ numRuns: 150 }),
    );
  });
});

function allReported(dir: string): boolean {
  return readJournal(dir).length === 0;
}
