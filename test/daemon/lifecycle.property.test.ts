import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { pino } from 'pino';
import type { ServerParts } from '../../src/daemon/build-server.js';
import { DAEMON_MOVES, DaemonLifecycle, type DaemonState } from '../../src/daemon/lifecycle.js';
import { RUNNER_MOVES, type RunnerState } from '../../src/daemon/runner-state.js';
import { ServerRunner } from '../../src/daemon/server-runner.js';
import type { Moves } from '../../src/daemon/state-table.js';
import { ConfigError } from '../../src/errors.js';
import { FakeClock } from '../helpers/fake-clock.js';
import { fcOptions } from '../helpers/fc-options.js';

/**
 * Over any sequence of what happens to porter (start-up's steps, SIGHUPs and the reloads they
 * make, stop signals, a store refused or the lock lost while stopping, a loop's fatal error, the
 * close), the daemon and its runners change state only along DAEMON_MOVES and RUNNER_MOVES
 * (docs/design.md#lifecycle), judged from outside the tables: the state seen before and after
 * each event, and every porter.state line chained from the last. After a stop nothing but the
 * drain follows, and the close always ends stopped.
 */

function isMove<S extends string>(table: Moves<S>, from: S, to: S): boolean {
  return from === to || table[from].includes(to);
}

type DaemonEvent = 'step' | 'sighup' | 'reload-end' | 'stop' | 'stop-once';
const daemonEvent = fc.constantFrom<DaemonEvent>('step', 'sighup', 'reload-end', 'stop', 'stop-once');

/**
 * Drives the lifecycle as daemon.ts does: serve()'s steps in order, a reload only once start-up
 * ended and one at a time, and the close (halt, finish) at the end.
 */
function playDaemon(events: readonly DaemonEvent[]): void {
  const lines: Array<{ from: DaemonState; to: DaemonState }> = [];
  const logger = pino({ level: 'debug' }, { write: (line: string) => void collect(line) });
  function collect(line: string): void {
    const parsed = JSON.parse(line) as { event: string; from: DaemonState; to: DaemonState };
    if (parsed.event === 'porter.state') lines.push({ from: parsed.from, to: parsed.to });
  }
  const actions: string[] = [];
  const lifecycle = new DaemonLifecycle(logger, {
    shutdownMs: () => 7_000,
    actions: { drain: (ms) => actions.push(`drain ${ms}`), force: () => actions.push('force') },
  });
  const steps = ['logging-in', 'running'] as const;
  let step = 0;
  let reloading = false;
  let stops = 0;
  const seen: DaemonState[] = [lifecycle.state];
  const act = (event: DaemonEvent | 'halt' | 'finish'): void => {
    switch (event) {
      case 'step':
        if (step < steps.length) lifecycle.advance(steps[step++]!);
        break;
      case 'sighup':
        if (step === steps.length && !reloading && !lifecycle.stopping) reloading = lifecycle.advance('reloading');
        break;
      case 'reload-end':
        if (reloading) lifecycle.advance('running');
        reloading = false;
        break;
      case 'stop':
        if (lifecycle.state !== 'stopped') stops++;
        lifecycle.stop();
        break;
      case 'stop-once':
        if (!lifecycle.stopping) stops++;
        lifecycle.stopOnce();
        break;
      // The close: serve() ended (after a stop, or on an error), then everything closed.
      case 'halt':
        lifecycle.halt();
        assert.equal(lifecycle.state, 'draining', 'the close drains first');
        break;
      case 'finish':
        lifecycle.finish();
        break;
    }
    const [before, after] = [seen.at(-1)!, lifecycle.state];
    assert.ok(isMove(DAEMON_MOVES, before, after), `${event} moved ${before} → ${after}, a move DAEMON_MOVES lacks`);
    assert.equal(lifecycle.stopping, after === 'draining' || after === 'stopped', `stopping is being in draining or stopped (${after})`);
    assert.equal(lifecycle.stopSignal.aborted, lifecycle.stopping);
    if (stops > 0) {
      assert.ok(after === 'draining' || after === 'stopped', `after a stop, ${after}`);
      assert.equal(lifecycle.drainMs, 7_000, 'the bound is the one read at the stop');
    }
    seen.push(after);
  };
  for (const event of events) act(event);
  act('halt');
  act('finish');
  assert.equal(lifecycle.state, 'stopped');
  // Every move was logged, each from where the last one left.
  let at: DaemonState = 'starting';
  for (const { from, to } of lines) {
    assert.equal(from, at, `porter.state ${from} → ${to} does not start where the last move ended (${at})`);
    assert.ok(DAEMON_MOVES[from].includes(to), `porter.state ${from} → ${to} is not in DAEMON_MOVES`);
    at = to;
  }
  assert.equal(at, 'stopped');
  // The first stop drained, each later stop signal before the close forced, and a stop-once never did.
  const expected = stops === 0 ? [] : ['drain 7000', ...Array<string>(actions.length - 1).fill('force')];
  assert.deepEqual(actions, expected);
  assert.equal(actions.filter((a) => a === 'force').length, Math.max(0, stops - 1));
}

type RunnerEvent = 'connect' | 'refuse-login' | 'run' | 'loop-fails' | 'request-stop' | 'abandon' | 'stop' | 'close' | 'drain-bound';
const runnerEvent = fc.constantFrom<RunnerEvent>(
  'connect',
  'refuse-login',
  'run',
  'loop-fails',
  'request-stop',
  'abandon',
  'stop',
  'close',
  'drain-bound',
);

/** A loop that ends when stopped hard or gracefully (the hand is empty), or fails when told. */
function fakeParts(): { parts: ServerParts; fail: () => void; refuse: { next: boolean } } {
  let fail = (): void => {};
  const refuse = { next: false };
  const parts = {
    server: { id: 's1' },
    executor: {
      connect: () => (refuse.next ? Promise.reject(new ConfigError('rcon: wrong password')) : Promise.resolve()),
      close: () => Promise.resolve(),
    },
    players: { startWatching: () => {} },
    loop: {
      run: ({ stop }: { stop: AbortSignal }) =>
        new Promise<void>((resolve, reject) => {
          fail = () => reject(new Error('the loop failed'));
          if (stop.aborted) resolve();
          stop.addEventListener('abort', () => resolve(), { once: true });
        }),
    },
  } as unknown as ServerParts;
  return { parts, fail: () => fail(), refuse };
}

async function playRunner(events: readonly RunnerEvent[]): Promise<void> {
  const clock = new FakeClock();
  const { parts, fail, refuse } = fakeParts();
  const runner = new ServerRunner(parts, { logger: pino({ level: 'silent' }), clock });
  const seen: RunnerState[] = [runner.state];
  let stopped = false;
  const settle = async (): Promise<void> => {
    for (let i = 0; i < 5; i++) await new Promise<void>((resolve) => setImmediate(resolve));
  };
  const check = (event: RunnerEvent | 'end'): void => {
    const [before, after] = [seen.at(-1)!, runner.state];
    assert.ok(isMove(RUNNER_MOVES, before, after), `${event} moved ${before} → ${after}, a move RUNNER_MOVES lacks`);
    assert.equal(runner.stopping, after === 'draining' || after === 'stopped', `stopping is being in draining or stopped (${after})`);
    if (stopped) assert.ok(after === 'draining' || after === 'stopped', `after a stop, ${after}`);
    seen.push(after);
  };
  for (const event of events) {
    switch (event) {
      case 'connect':
        await runner.connect();
        break;
      case 'refuse-login':
        refuse.next = true;
        await runner.connect().catch(() => runner.close());
        refuse.next = false;
        break;
      case 'run':
        // As the fleet runs it: a loop that ends, however, closes the runner.
        void runner
          .run()
          .catch(() => undefined)
          .finally(() => void runner.close());
        break;
      case 'loop-fails':
        fail();
        break;
      case 'request-stop':
        runner.requestStop(1_000);
        stopped = true;
        break;
      case 'abandon':
        runner.abandon();
        stopped = true;
        break;
      case 'stop':
        stopped = true;
        await runner.stop(1_000);
        assert.equal(runner.state, 'stopped', 'stop() ends stopped');
        break;
      case 'close':
        await runner.close();
        break;
      case 'drain-bound':
        clock.advance(1_000);
        break;
    }
    check(event);
    await settle();
    check(event);
  }
  await runner.stop(1_000);
  check('end');
  assert.equal(runner.state, 'stopped');
}

describe('the lifecycle moves only along its tables', () => {
  test('the daemon: any sequence of steps, reloads and stops', () => {
    fc.assert(
      fc.property(fc.array(daemonEvent, { maxLength: 30 }), (events) => playDaemon(events)),
      fcOptions({ numRuns: 500 }),
    );
  });

  test('a runner: any sequence of logins, runs, failures, stops and closes', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(runnerEvent, { maxLength: 20 }), (events) => playRunner(events)),
      fcOptions({ numRuns: 200 }),
    );
  });
});
