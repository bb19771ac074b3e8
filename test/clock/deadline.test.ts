import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { startDeadline, systemClock } from '../../src/clock.js';
import { FakeClock } from '../helpers/fake-clock.js';
import { waitFor } from '../helpers/wait-for.js';

describe('startDeadline', () => {
  test('with a clock that only sleeps: fires when time passes, never after cancel', async () => {
    const clock = new FakeClock();
    let fired = 0;
    startDeadline(clock, 100, () => fired++);
    const cancel = startDeadline(clock, 100, () => fired++);
    cancel();
    clock.advance(150);
    await waitFor(() => fired >= 1);
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(fired, 1);
  });

  test('with the system clock: fires after the time, never after cancel', async () => {
    let fired = 0;
    const cancelled = startDeadline(systemClock, 5, () => fired++);
    cancelled();
    startDeadline(systemClock, 5, () => fired++);
    await waitFor(() => fired >= 1);
    // The cancelled one was due at the same moment: one more turn of timers would have run it.
    await new Promise((resolve) => setTimeout(resolve, 10));
    assert.equal(fired, 1);
  });
});
