import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Clock } from '../../src/clock.js';
import { WakeSignal } from '../../src/wake-signal.js';
import { FakeClock, flush } from '../helpers/fake-clock.js';

/** A clock with timers that fire only when the test says so: the system clock's path, stepped. */
class TimerClock implements Clock {
  readonly timers = new Set<() => void>();
  now = () => 0;
  sleep = () => Promise.reject(new Error('the timer path must not sleep'));
  setTimer = (fn: () => void): (() => void) => {
    this.timers.add(fn);
    return () => this.timers.delete(fn);
  };
  fireAll(): void {
    const due = [...this.timers];
    this.timers.clear();
    for (const fn of due) fn();
  }
}

const clocks: Array<[string, () => { clock: Clock; expire: () => void; pending: () => number }]> = [
  [
    'a clock with timers',
    () => {
      const clock = new TimerClock();
      return { clock, expire: () => clock.fireAll(), pending: () => clock.timers.size };
    },
  ],
  [
    'a clock with only sleep',
    () => {
      const clock = new FakeClock();
      return { clock, expire: () => clock.advance(1000), pending: () => clock.sleeping };
    },
  ],
];

for (const [name, make] of clocks) {
  describe(`WakeSignal on ${name}`, () => {
    test('a sleep that runs its course resolves false', async () => {
      const { clock, expire } = make();
      const wake = new WakeSignal();
      const slept = wake.sleepUnlessWoken(clock, 1000);
      await flush();
      expire();
      assert.equal(await slept, false);
    });

    test('a wake during the sleep ends it early with true, and its timer is gone', async () => {
      const { clock, pending } = make();
      const wake = new WakeSignal();
      const slept = wake.sleepUnlessWoken(clock, 1000);
      await flush();
      assert.equal(pending(), 1);
      wake.wake();
      assert.equal(await slept, true);
      assert.equal(pending(), 0);
    });

    test('a wake while nobody sleeps is kept for the next sleep, once', async () => {
      const { clock, expire } = make();
      const wake = new WakeSignal();
      wake.wake();
      wake.wake();
      assert.equal(await wake.sleepUnlessWoken(clock, 1000), true);
      const second = wake.sleepUnlessWoken(clock, 1000);
      await flush();
      expire();
      assert.equal(await second, false);
    });

    test('a wake after the sleep expired is kept for the next one', async () => {
      const { clock, expire } = make();
      const wake = new WakeSignal();
      const first = wake.sleepUnlessWoken(clock, 1000);
      await flush();
      expire();
      assert.equal(await first, false);
      wake.wake();
      assert.equal(await wake.sleepUnlessWoken(clock, 1000), true);
    });
  });
}
