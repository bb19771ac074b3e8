import assert from 'node:assert/strict';
import { test } from 'node:test';
import { pino } from 'pino';
import { DaemonLifecycle, type DaemonState } from '../../src/daemon/lifecycle.js';

/** The daemon moves only along docs/design.md#the-daemon's diagram; a move it lacks is refused and changes nothing. */

const logger = pino({ level: 'silent' });

function walk(moves: readonly DaemonState[]): { state: DaemonState; taken: boolean[] } {
  const lifecycle = new DaemonLifecycle(logger);
  const taken = moves.map((next) => lifecycle.to(next));
  return { state: lifecycle.state, taken };
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
