import assert from 'node:assert/strict';
import { test } from 'node:test';
import { pino } from 'pino';
import { DAEMON_MOVES, DaemonLifecycle, type DaemonState } from '../../src/daemon/lifecycle.js';
import { IllegalMoveError, StateTable } from '../../src/daemon/state-table.js';

/**
 * The daemon moves only along docs/design.md#the-daemon's table; a move it lacks is refused and
 * changes nothing, and the lifecycle owns the stop: the first drains, a second forces.
 */

const logger = pino({ level: 'silent' });

function walk(moves: readonly DaemonState[]): { state: DaemonState; taken: boolean[] } {
  const table = new StateTable(DAEMON_MOVES, 'starting');
  const taken = moves.map((next) => table.to(next));
  return { state: table.state, taken };
}

function lifecycle(drainMs = 5_000): { lifecycle: DaemonLifecycle; actions: string[] } {
  const actions: string[] = [];
  const made = new DaemonLifecycle(logger, {
    shutdownMs: () => drainMs,
    actions: { drain: (ms) => actions.push(`drain ${ms}`), force: () => actions.push('force') },
  });
  return { lifecycle: made, actions };
}

test('a life: starting, logging in, running, a reload, draining, stopped', () => {
  assert.deepEqual(walk(['logging-in', 'running', 'reloading', 'running', 'draining', 'stopped']), {
    state: 'stopped',
    taken: [true, true, true, true, true, true],
  });
});

test('a stop at any state drains; nothing leaves draining but stopped', () => {
  for (const before of [[], ['logging-in'], ['logging-in', 'running'], ['logging-in', 'running', 'reloading']] as DaemonState[][]) {
    assert.equal(walk([...before, 'draining']).state, 'draining', `a stop after ${before.join(' → ') || 'start'}`);
  }
  // A reload that ends after the stop began, and logins that end after it: no way back.
  assert.deepEqual(walk(['logging-in', 'running', 'reloading', 'draining', 'running', 'logging-in', 'reloading']), {
    state: 'draining',
    taken: [true, true, true, true, false, false, false],
  });
});

test('no reload before porter runs, none while stopped', () => {
  assert.deepEqual(walk(['reloading']).taken, [false]);
  assert.deepEqual(walk(['logging-in', 'reloading']).taken, [true, false]);
  assert.deepEqual(walk(['draining', 'stopped', 'reloading', 'running']).taken, [true, true, false, false]);
});

test('a move the table lacks, demanded, is a named defect and changes nothing', () => {
  const table = new StateTable(DAEMON_MOVES, 'starting');
  assert.throws(
    () => table.must('running'),
    (error: unknown) => error instanceof IllegalMoveError && error.code === 'E_ILLEGAL_MOVE',
  );
  assert.equal(table.state, 'starting');
});

test('the first stop drains within the bound it read then; a second forces; one after stopped does nothing', () => {
  const { lifecycle: daemon, actions } = lifecycle(1_234);
  assert.equal(daemon.advance('logging-in'), true);
  daemon.stop();
  assert.equal(daemon.state, 'draining');
  assert.equal(daemon.stopSignal.aborted, true);
  assert.equal(daemon.drainMs, 1_234);
  daemon.stop();
  daemon.halt();
  daemon.finish();
  daemon.stop();
  assert.equal(daemon.state, 'stopped');
  assert.deepEqual(actions, ['drain 1234', 'force']);
});

test('after a stop no step of start-up or of a reload is taken; a store refused while draining does not force', () => {
  const { lifecycle: daemon, actions } = lifecycle();
  daemon.stop();
  assert.deepEqual([daemon.advance('logging-in'), daemon.advance('running'), daemon.advance('reloading')], [false, false, false]);
  daemon.stopOnce();
  assert.deepEqual(actions, ['drain 5000']);
});

test('a step out of order is a defect, not a quiet refusal', () => {
  const { lifecycle: daemon } = lifecycle();
  assert.throws(() => daemon.advance('running'), IllegalMoveError);
  assert.throws(() => daemon.advance('reloading'), IllegalMoveError);
  assert.equal(daemon.state, 'starting');
});

test('serve() that fails before any stop: the halt stops without a drain (bound 0, no drain asked)', () => {
  const { lifecycle: daemon, actions } = lifecycle();
  daemon.advance('logging-in');
  daemon.halt();
  assert.equal(daemon.state, 'draining');
  assert.equal(daemon.drainMs, 0);
  daemon.finish();
  assert.equal(daemon.state, 'stopped');
  assert.deepEqual(actions, []);
});
