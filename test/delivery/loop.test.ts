import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, test } from 'node:test';
import { pino } from 'pino';
import type { PullResult, ReportResult, ServerApi } from '../../src/api/types.js';
import { ApiServerError } from '../../src/api/errors.js';
import { CommandFailedError, CredentialsError, NotSentError, OutcomeUnknownError } from '../../src/errors.js';
import { Journal } from '../../src/delivery/journal/journal.js';
import { DeliveryLoop, type DeliveryLoopOptions } from '../../src/delivery/loop.js';
import { type Executor } from '../../src/protocols/executor.js';
import { FakeClock, flush, runClockUntil } from '../helpers/fake-clock.js';
import { FaultyFs } from '../helpers/faulty-fs.js';
import { waitFor } from '../helpers/wait-for.js';

/**
 * The loop's decisions with scripted collaborators: what is reported for each kind of executor
 * outcome, and that nothing is ever run twice. The end-to-end behaviour over the real simulators
 * is in test/integration/.
 */

const serverId = '1b4e28ba-2fa1-11d2-883f-0016d3cca427';
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

class ScriptedApi implements ServerApi {
  readonly serverId = serverId;
  readonly queue: PullResult[] = [];
  readonly reports: Array<{ id: string; result: 'done' | 'fail'; reason?: string }> = [];
  reportFailuresLeft = 0;
  /** What each accepted report answers. */
  answer: ReportResult = 'accepted';
  pulls = 0;
  async pull(): Promise<PullResult> {
    this.pulls++;
    return this.queue.shift() ?? { kind: 'empty', status: 204 };
  }
  async done(id: string): Promise<ReportResult> {
    return this.#report({ id, result: 'done' });
  }
  async fail(id: string, reason: string): Promise<ReportResult> {
    return this.#report({ id, result: 'fail', reason });
  }
  #report(entry: { id: string; result: 'done' | 'fail'; reason?: string }): ReportResult {
    if (this.reportFailuresLeft > 0) {
      this.reportFailuresLeft--;
      throw Object.assign(new Error('503 from the API'), { status: 503 });
    }
    this.reports.push(entry);
    return this.answer;
  }
}

class ScriptedExecutor implements Executor {
  readonly connectedText = 'a scripted game server';
  readonly ran: string[] = [];
  next: Array<(command: string) => Promise<string>> = [];
  #ready = true;
  // Woken when the test brings the server back: no real-time polling that a slow machine could lag.
  readonly #readyWaiters = new Set<() => void>();
  get ready(): boolean {
    return this.#ready;
  }
  set ready(value: boolean) {
    this.#ready = value;
    if (!value) return;
    for (const wake of this.#readyWaiters) wake();
    this.#readyWaiters.clear();
  }
  async connect(): Promise<void> {}
  isReady(): boolean {
    return this.#ready;
  }
  waitReadyCalls = 0;
  /** How many callers wait for the server now: the loop parked in its not-sent retry. */
  get waitingForReady(): number {
    return this.#readyWaiters.size;
  }
  async waitReady(signal?: AbortSignal): Promise<void> {
    this.waitReadyCalls++;
    if (signal?.aborted) throw signal.reason;
    if (this.#ready) return;
    await new Promise<void>((resolve, reject) => {
      const wake = () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      };
      const onAbort = () => {
        this.#readyWaiters.delete(wake);
        reject(signal?.reason);
      };
      this.#readyWaiters.add(wake);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }
  async execute(command: string): Promise<string> {
    if (!this.ready) throw new NotSentError('connection is down');
    const step = this.next.shift();
    if (!step) {
      this.ran.push(command);
      return '';
    }
    return step(command);
  }
  async query(): Promise<string> {
    return '';
  }
  stats() {
    return { connected: this.ready, reconnects: 0 };
  }
  async close(): Promise<void> {}
}

/**
 * On the fake clock: the loop's idle waits, API back-offs (0.5 s doubling), notSentRetryMs and
 * journal retries pass when the test moves time (`until`), not after real seconds, and none can
 * run out early because the machine is slow. The loop on the real clock (its idle wait a timer)
 * is in loop-gates.test.ts and loop-history.test.ts.
 */
function setup(overrides: Partial<DeliveryLoopOptions> = {}, disk = new FaultyFs()) {
  const dir = mkdtempSync(join(tmpdir(), 'porter-loop-'));
  dirs.push(dir);
  const api = new ScriptedApi();
  const executor = new ScriptedExecutor();
  const journal = new Journal(dir, { files: disk.files() });
  // Fake time starts at the wall time: the journal dates what it keeps by its own clock.
  const clock = new FakeClock(Date.now());
  const loop = new DeliveryLoop({
    serverId,
    api,
    executor,
    players: { get: async () => [] },
    journal,
    policy: { check: (command) => (command.startsWith('op ') ? { ok: false, reason: 'denied by rule "op"' } : { ok: true }) },
    failureIn: (answer) => (/No player was found/.test(answer) ? answer : null),
    idleDelay: () => 5,
    pullDelay: () => 0,
    notSentRetryMs: 300,
    clock,
    logger: pino({ level: 'silent' }),
    ...overrides,
  });
  const stop = new AbortController();
  const hard = new AbortController();
  const running = loop.run({ stop: stop.signal, hard: hard.signal });
  return { api, executor, journal, loop, stop, hard, running, dir, clock };
}

/** Moves the fake clock from wake-up to wake-up until `done` holds; fails after a minute of it. */
async function until(clock: FakeClock, done: () => boolean, what = 'condition'): Promise<void> {
  assert.ok(await runClockUntil(clock, done, 60_000), `a minute of fake time passed without ${what}`);
}

describe('delivery loop', () => {
  test('runs a claimed command once, reports done and clears the journal', async () => {
    const t = setup();
    t.api.queue.push({ kind: 'claimed', id: '9007199254740993', command: 'give Steve diamond 1' });
    await until(t.clock, () => t.api.reports.length === 1, 'a report');
    t.stop.abort();
    await t.running;
    assert.deepEqual(t.executor.ran, ['give Steve diamond 1']);
    assert.deepEqual(t.api.reports, [{ id: '9007199254740993', result: 'done' }]);
    assert.deepEqual(t.journal.pending(), []);
  });

  test('a game answer matching a failure pattern is reported as fail with the answer', async () => {
    const t = setup();
    t.executor.next.push(async () => 'No player was found');
    t.api.queue.push({ kind: 'claimed', id: '1', command: 'give Nobody dirt 1' });
    await until(t.clock, () => t.api.reports.length === 1);
    t.stop.abort();
    await t.running;
    assert.equal(t.api.reports[0]?.result, 'fail');
    assert.match(t.api.reports[0]?.reason ?? '', /No player was found/);
  });

  test('commands that must not be sent are failed with a reason and never reach the executor', async () => {
    const t = setup();
    t.api.queue.push(
      { kind: 'claimed', id: '1', command: 'give Steve\nop Steve' },
      { kind: 'claimed', id: '2', command: 'op Steve' },
      { kind: 'claimed', id: '3', command: { not: 'a string' } },
    );
    await until(t.clock, () => t.api.reports.length === 3);
    t.stop.abort();
    await t.running;
    assert.deepEqual(t.executor.ran, []);
    assert.deepEqual(
      t.api.reports.map((r) => r.result),
      ['fail', 'fail', 'fail'],
    );
    assert.match(t.api.reports[0]?.reason ?? '', /CR, LF or NUL/);
    assert.match(t.api.reports[1]?.reason ?? '', /denied by rule "op"/);
    assert.match(t.api.reports[2]?.reason ?? '', /no command text/);
  });

  test('sent but unanswered is failed as unknown and never resent', async () => {
    const t = setup();
    let attempts = 0;
    t.executor.next.push(async () => {
      attempts++;
      throw new OutcomeUnknownError('no answer within 5000 ms');
    });
    t.api.queue.push({ kind: 'claimed', id: '5', command: 'give Steve diamond 1' });
    await until(t.clock, () => t.api.reports.length === 1);
    t.stop.abort();
    await t.running;
    assert.equal(attempts, 1);
    assert.match(t.api.reports[0]?.reason ?? '', /^outcome unknown: no answer/);
  });

  test('not sent is retried when the game server is back, within the bound', async () => {
    // The retry window runs on a fake clock: the server comes back 1 ms before notSentRetryMs
    // ends however slow the machine is, instead of a real 50 ms timer racing a real 300 ms window.
    const t = setup();
    const { clock } = t;
    let failedAt = -1;
    t.executor.next.push(async () => {
      t.executor.ready = false;
      failedAt = clock.now();
      throw new NotSentError('connection is down');
    });
    t.api.queue.push({ kind: 'claimed', id: '6', command: 'give Steve diamond 1' });
    assert.ok(
      await runClockUntil(clock, () => t.executor.waitingForReady > 0, 60_000),
      'the loop waiting for the game server to come back',
    );
    clock.set(failedAt + 299);
    await flush();
    assert.equal(t.api.reports.length, 0, 'gave up before notSentRetryMs (300 ms) had passed');
    t.executor.ready = true;
    // Time stands still from here: the report cannot come from the window running out.
    await waitFor(() => t.api.reports.length === 1, { what: 'the report after the retry' });
    assert.equal(clock.now(), failedAt + 299);
    t.stop.abort();
    await t.running;
    assert.deepEqual(t.executor.ran, ['give Steve diamond 1']);
    assert.equal(t.api.reports[0]?.result, 'done');
  });

  test('not sent for longer than notSentRetryMs is failed with the reason', async () => {
    // On the fake clock: the window ends when the test moves time past it, not after 100 real ms.
    const t = setup({ notSentRetryMs: 100 });
    const { clock } = t;
    let failedAt = -1;
    t.executor.next.push(async () => {
      t.executor.ready = false;
      failedAt = clock.now();
      throw new NotSentError('connection is down');
    });
    t.api.queue.push({ kind: 'claimed', id: '7', command: 'give Steve diamond 1' });
    assert.ok(await runClockUntil(clock, () => t.api.reports.length === 1, 60_000), 'the failure report');
    assert.ok(clock.now() >= failedAt + 100, 'failed only once notSentRetryMs (100 ms) had passed');
    t.stop.abort();
    t.executor.ready = true;
    await t.running;
    assert.deepEqual(t.executor.ran, []);
    assert.match(t.api.reports[0]?.reason ?? '', /^not sent: could not be sent for 100 ms \(notSentRetryMs\): connection is down/);
  });

  test('a script that ran and failed is reported with its own message', async () => {
    const t = setup();
    t.executor.next.push(async () => {
      throw new CommandFailedError('exit status 3: no such player');
    });
    t.api.queue.push({ kind: 'claimed', id: '8', command: 'rank Steve vip' });
    await until(t.clock, () => t.api.reports.length === 1);
    t.stop.abort();
    await t.running;
    assert.equal(t.api.reports[0]?.reason, 'exit status 3: no such player');
  });

  test('a report the API refuses for a while is retried until accepted, and the command is not rerun', async () => {
    const t = setup();
    t.api.reportFailuresLeft = 2;
    t.api.queue.push({ kind: 'claimed', id: '9', command: 'say hi' });
    await until(t.clock, () => t.api.reports.length === 1, 'the report accepted');
    t.stop.abort();
    await t.running;
    assert.deepEqual(t.executor.ran, ['say hi']);
    assert.deepEqual(t.journal.pending(), []);
  });

  test('a rejected password settles the command in hand as not sent, then stops with exit 78', async () => {
    const t = setup();
    t.executor.next.push(async () => {
      throw new CredentialsError('the RCON password was rejected by 127.0.0.1:25575');
    });
    t.api.queue.push({ kind: 'claimed', id: '10', command: 'give Steve diamond 1' });
    await assert.rejects(t.running, (error: unknown) => (error as CredentialsError).exitCode === 78);
    assert.equal(t.api.reports[0]?.result, 'fail');
    assert.match(t.api.reports[0]?.reason ?? '', /^not sent: the RCON password was rejected/);
    assert.deepEqual(t.journal.pending(), []);
  });

  test('no pull while the game server is unreachable', async () => {
    const t = setup();
    await until(t.clock, () => t.api.pulls > 0, 'the first idle pull');
    t.executor.ready = false;
    const pullsBefore = t.api.pulls;
    const waitsBefore = t.executor.waitReadyCalls;
    // Once the loop is parked waiting for the game server, it must not have pulled again.
    await until(
      t.clock,
      () => t.executor.waitReadyCalls > waitsBefore + 0 && !t.executor.isReady(),
      'the loop waiting for the game server',
    );
    assert.ok(t.api.pulls <= pullsBefore + 1, 'at most the pull already under way when the server went down');
    t.executor.ready = true;
    await until(t.clock, () => t.api.pulls > pullsBefore, 'a pull once the server is back');
    t.stop.abort();
    await t.running;
  });

  test('on start, a claim without outcome is reported as unknown and never run; a recorded outcome is reported as is', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'porter-loop-'));
    dirs.push(dir);
    const clock = new FakeClock(Date.now());
    const before = new Journal(dir);
    await before.claim(serverId, '100', 'give Steve diamond 1', clock.now());
    await before.claim(serverId, '101', 'give Alex diamond 1', clock.now());
    await before.recordOutcome(serverId, '101', { result: 'done' }, clock.now());
    const api = new ScriptedApi();
    const executor = new ScriptedExecutor();
    const loop = new DeliveryLoop({ ...loopOptions(api, executor, clock), journal: new Journal(dir) });
    await loop.settleJournal(new AbortController().signal);
    assert.deepEqual(executor.ran, []);
    const byId = Object.fromEntries(api.reports.map((r) => [r.id, r]));
    assert.equal(byId['100']?.result, 'fail');
    assert.match(byId['100']?.reason ?? '', /^outcome unknown: porter stopped after claiming/);
    assert.equal(byId['101']?.result, 'done');
    assert.deepEqual(new Journal(dir).pending(), []);
  });

  test('an id the API hands out again is never run again: its remembered outcome is reported again', async () => {
    const t = setup();
    t.executor.next.push(async () => 'No player was found');
    t.api.queue.push({ kind: 'claimed', id: '20', command: 'give Steve diamond 1' }, { kind: 'claimed', id: '21', command: 'say hi' });
    await until(t.clock, () => t.api.reports.length === 2);
    t.api.queue.push({ kind: 'claimed', id: '20', command: 'give Steve diamond 1' }, { kind: 'claimed', id: '21', command: 'say hi' });
    await until(t.clock, () => t.api.reports.length === 4);
    t.stop.abort();
    await t.running;
    assert.deepEqual(t.executor.ran, ['say hi'], 'each id ran once (20 answered "No player was found", 21 ran)');
    assert.deepEqual(t.api.reports.slice(2), t.api.reports.slice(0, 2), 'the same outcomes, reported again');
  });

  test('a settled id is remembered across a restart', async () => {
    const t = setup();
    t.api.queue.push({ kind: 'claimed', id: '30', command: 'say once' });
    await until(t.clock, () => t.api.reports.length === 1);
    t.stop.abort();
    await t.running;
    t.journal.close();
    const api = new ScriptedApi();
    const executor = new ScriptedExecutor();
    const clock = new FakeClock(t.clock.now());
    const again = new DeliveryLoop({ ...loopOptions(api, executor, clock), journal: new Journal(t.dir) });
    const stop = new AbortController();
    const running = again.run({ stop: stop.signal, hard: new AbortController().signal });
    api.queue.push({ kind: 'claimed', id: '30', command: 'say once' });
    await until(clock, () => api.reports.length === 1);
    stop.abort();
    await running;
    assert.deepEqual(executor.ran, []);
    assert.deepEqual(api.reports, [{ id: '30', result: 'done' }]);
  });

  test('an empty or blank command is failed and never sent', async () => {
    const t = setup();
    t.api.queue.push({ kind: 'claimed', id: '40', command: '' }, { kind: 'claimed', id: '41', command: ' \t ' });
    await until(t.clock, () => t.api.reports.length === 2);
    t.stop.abort();
    await t.running;
    assert.deepEqual(t.executor.ran, []);
    for (const report of t.api.reports) assert.match(report.reason ?? '', /empty command; nothing was sent/);
  });

  test('a claim the journal cannot write is not run and is reported failed; nothing is claimed until the journal is writable again', async () => {
    const disk = new FaultyFs();
    const t = setup({}, disk);
    await until(t.clock, () => t.api.pulls > 0, 'the first idle pull');
    disk.refuseWith = 'ENOSPC';
    t.api.queue.push({ kind: 'claimed', id: '50', command: 'give Steve diamond 1' });
    await until(t.clock, () => t.api.reports.length === 1, 'the failed report');
    assert.equal(t.api.reports[0]?.result, 'fail');
    assert.match(t.api.reports[0]?.reason ?? '', /^not run: porter could not record the claim in its journal/);
    assert.equal(t.journal.writable, false);
    const pulls = t.api.pulls;
    t.api.queue.push({ kind: 'claimed', id: '51', command: 'give Alex diamond 1' });
    // The loop retries the journal about every second; give it several tries while the disk is full.
    await until(t.clock, () => disk.writes > 0 && t.journal.writeFailures >= 3, 'the loop retrying the journal');
    assert.equal(t.api.pulls, pulls, 'pulled while the journal could not be written');
    disk.refuseWith = undefined;
    await until(t.clock, () => t.api.reports.length === 2, 'deliveries resuming by themselves');
    t.stop.abort();
    await t.running;
    assert.deepEqual(t.executor.ran, ['give Alex diamond 1']);
    assert.deepEqual(t.api.reports[1], { id: '51', result: 'done' });
  });

  test('an outcome the journal cannot write is still reported', async () => {
    const disk = new FaultyFs();
    const t = setup({}, disk);
    t.executor.next.push(async (command) => {
      t.executor.ran.push(command);
      disk.refuseWith = 'EIO';
      return '';
    });
    t.api.queue.push({ kind: 'claimed', id: '60', command: 'give Steve diamond 1' });
    await until(t.clock, () => t.api.reports.length === 1);
    disk.refuseWith = undefined;
    t.stop.abort();
    await t.running;
    assert.deepEqual(t.api.reports, [{ id: '60', result: 'done' }]);
    assert.deepEqual(t.executor.ran, ['give Steve diamond 1']);
  });

  test('a secret echoed in a failure is scrubbed from the report and the journal', async () => {
    const secret = 'rcon-Pa55word!';
    const t = setup({ scrub: (text) => text.split(secret).join('[Redacted]') });
    t.executor.next.push(async () => {
      throw new CommandFailedError(`exit status 1: auth failed for password ${secret}`);
    });
    t.api.queue.push({ kind: 'claimed', id: '70', command: 'rank Steve vip' });
    await until(t.clock, () => t.api.reports.length === 1);
    t.stop.abort();
    await t.running;
    assert.equal(t.api.reports[0]?.reason, 'exit status 1: auth failed for password [Redacted]');
    const onDisk = readdirSync(t.dir)
      .map((name) => readFileSync(join(t.dir, name), 'utf8'))
      .join('');
    assert.ok(!onDisk.includes(secret), 'the password reached the journal');
  });

  test('a report the API refuses is not logged or counted as a failed pull', async () => {
    const lines: Array<Record<string, unknown>> = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) });
    const t = setup({ logger });
    t.api.reportFailuresLeft = 1;
    t.api.queue.push({ kind: 'claimed', id: '80', command: 'say hi' });
    await until(t.clock, () => t.api.reports.length === 1, 'the report accepted');
    t.stop.abort();
    await t.running;
    // The warning says why, not only that.
    const shown = JSON.stringify(lines);
    assert.ok(
      lines.some((line) => line.event === 'report.retry' && typeof line.err === 'string' && line.err !== ''),
      shown,
    );
    assert.ok(!lines.some((line) => line.event === 'pull.failed'), shown);
  });

  test('a report the API answers 404/409 is one report.settled line with its status and code', async () => {
    const lines: Array<Record<string, unknown>> = [];
    const logger = pino({ level: 'debug' }, { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) });
    const t = setup({ logger });
    t.api.answer = { kind: 'alreadySettled', status: 409, apiCode: 'COMMAND_NOT_PROCESSING' };
    t.api.queue.push({ kind: 'claimed', id: '81', command: 'say hi' });
    await until(t.clock, () => t.api.reports.length === 1, 'the report answered');
    t.stop.abort();
    await t.running;
    const settled = lines.filter((line) => String(line.event).endsWith('settled'));
    assert.deepEqual(
      settled.map(({ event, level, id, outcome, status, apiCode }) => ({ event, level, id, outcome, status, apiCode })),
      [{ event: 'report.settled', level: 30, id: '81', outcome: 'done', status: 409, apiCode: 'COMMAND_NOT_PROCESSING' }],
    );
    assert.deepEqual(t.journal.pending(), [], 'settled in the journal');
  });

  test('an unusable pull answer is one pull.unusable line with its reason', async () => {
    const lines: Array<Record<string, unknown>> = [];
    const logger = pino({ level: 'debug' }, { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) });
    const t = setup({ logger });
    t.api.queue.push({ kind: 'unusable', reason: 'the id -5 is not a positive integer' });
    await until(t.clock, () => lines.some((line) => line.event === 'pull.unusable'), 'the unusable pull logged');
    t.stop.abort();
    await t.running;
    const unusable = lines.filter((line) => String(line.event).endsWith('unusable'));
    assert.deepEqual(
      unusable.map(({ event, level, reason }) => ({ event, level, reason })),
      [{ event: 'pull.unusable', level: 50, reason: 'the id -5 is not a positive integer' }],
    );
  });

  test("the health text of an API failure leaves out the API's free-text detail", async () => {
    const detail = 'Upstream node db-7.internal refused: see https://status.example/123';
    const api = new ScriptedApi();
    let failures = 0;
    api.pull = async () => {
      failures++;
      throw new ApiServerError(
        `Seller API failed (503 (no code)) on pull [API says: "${detail}"]`,
        { status: 503, apiCode: undefined, detail, requiredScope: undefined, retryAfterMs: undefined, traceId: undefined },
        { route: 'pull' },
      );
    };
    const clock = new FakeClock(Date.now());
    const loop = new DeliveryLoop({
      ...loopOptions(api, new ScriptedExecutor(), clock),
      journal: new Journal(mkdtempSync(join(tmpdir(), 'porter-loop-'))),
    });
    const stop = new AbortController();
    const running = loop.run({ stop: stop.signal, hard: new AbortController().signal });
    await until(clock, () => failures > 0 && loop.health().lastApiError !== undefined);
    stop.abort();
    await running;
    const text = loop.health().lastApiError ?? '';
    assert.match(text, /Seller API failed \(503/);
    assert.ok(!text.includes(detail), text);
  });
});

function loopOptions(api: ScriptedApi, executor: ScriptedExecutor, clock: FakeClock): Omit<DeliveryLoopOptions, 'journal'> {
  return {
    serverId,
    api,
    executor,
    players: { get: async () => [] },
    policy: { check: () => ({ ok: true }) },
    failureIn: () => null,
    idleDelay: () => 5,
    pullDelay: () => 0,
    notSentRetryMs: 100,
    clock,
    logger: pino({ level: 'silent' }),
  };
}
