import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import { describe, test } from 'node:test';
import { withDeadline } from '../../src/abort.js';
import { FakeClock, flush } from '../helpers/fake-clock.js';

describe('withDeadline', () => {
  test('aborts with its own reason when the deadline passes on the injected clock', async () => {
    const clock = new FakeClock();
    const within = withDeadline(clock, 1_000, undefined, () => new Error('no answer within 1000 ms'));
    clock.advance(999);
    await flush();
    assert.equal(within.signal.aborted, false);
    assert.equal(within.timedOut, false);
    clock.advance(1);
    await flush();
    assert.equal(within.signal.aborted, true);
    assert.equal(within.timedOut, true);
    assert.equal((within.signal.reason as Error).message, 'no answer within 1000 ms');
    within.release();
  });

  test("aborts with the caller's reason when the caller aborts first, and is not timed out", async () => {
    const clock = new FakeClock();
    const caller = new AbortController();
    const within = withDeadline(clock, 1_000, caller.signal);
    caller.abort(new Error('stopping'));
    assert.equal(within.signal.aborted, true);
    assert.equal((within.signal.reason as Error).message, 'stopping');
    assert.equal(within.timedOut, false);
    within.release();
    clock.advance(5_000);
    await flush();
    assert.equal(within.timedOut, false, 'a released deadline never fires');
  });

  test('expire() ends it now, as the deadline would (a second deadline on the same exchange)', () => {
    const within = withDeadline(new FakeClock(), 60_000, undefined);
    within.expire();
    assert.equal(within.signal.aborted, true);
    assert.equal(within.timedOut, true);
    within.release();
  });

  test("release cancels the deadline and leaves nothing on the caller's signal", async () => {
    const clock = new FakeClock();
    const lifetime = new AbortController();
    for (let i = 0; i < 1_000; i++) withDeadline(clock, 1_000, lifetime.signal).release();
    assert.equal(getEventListeners(lifetime.signal, 'abort').length, 0);
    assert.equal(clock.sleeping, 0, 'no deadline left waiting on the clock');
    const within = withDeadline(clock, 1_000, lifetime.signal);
    within.release();
    clock.advance(1_000);
    await flush();
    lifetime.abort();
    assert.equal(within.signal.aborted, false);
  });
});
