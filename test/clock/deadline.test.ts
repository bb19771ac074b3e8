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
    let cancelledFired = 0;
    let keptFired = 0;
    const cancelled = startDeadline(systemClock, 5, () => cancelledFired++);
    cancelled();
    startDeadline(systemClock, 5, () => keptFired++);
    await waitFor(() => keptFired >= 1, { what: 'the deadline that was kept' });
    // Same delay, set first: Node runs the cancelled timer (and its decision) no later than the kept
    // one, so had the cancel not held it would have fired by now. No real-time wait needed.
    assert.equal(cancelledFired, 0);
    assert.equal(keptFired, 1);
  });
});
