import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Budget, type RouteBudgetSnapshot } from '../../../src/api/budget/budget.js';
import { idleDelay } from '../../../src/api/budget/idle-pacing.js';
import { FakeClock } from '../../helpers/fake-clock.js';

function pull(over: Partial<RouteBudgetSnapshot>): RouteBudgetSnapshot {
  return {
    remaining: 120,
    used: 0,
    cap: 120,
    apiRemaining: undefined,
    windowEndsAt: 60_000,
    blockedUntil: undefined,
    delayMs: 0,
    windowMs: 60_000,
    ...over,
  };
}

describe('idle pacing', () => {
  test('before the first call of a window, it waits poll.idleMs', () => {
    assert.equal(idleDelay(pull({ windowEndsAt: undefined }), 0, 1000), 1000);
  });

  test('with webhooks waking the loop, idling runs at exactly poll.idleMs whatever budget is spare: the safety net costs 60 000 / idleMs pulls a minute', () => {
    for (const snapshot of [pull({}), pull({ remaining: 31 }), pull({ windowEndsAt: undefined }), pull({ remaining: 1 })]) {
      assert.equal(idleDelay(snapshot, 0, 15_000, true), 15_000);
      assert.equal(idleDelay(snapshot, 59_000, 1000, true), 1000);
    }
    assert.ok(idleDelay(pull({}), 0, 15_000) < 15_000, 'without webhooks the spare budget speeds idling up');
  });

  test('spreads the spare budget over the rest of the window: 90 spare calls in 60 s → one every 667 ms', () => {
    assert.equal(idleDelay(pull({}), 0, 1000), 667);
  });

  test('keeps pace: the same interval halfway through a window idled at that pace', () => {
    const used = Math.floor(30_000 / 667);
    assert.ok(Math.abs(idleDelay(pull({ remaining: 120 - used, used }), 30_000, 1000) - 667) < 15);
  });

  test('never spends the reserve (a quarter of the cap) on idling', () => {
    assert.equal(idleDelay(pull({ remaining: 30 }), 59_000, 1000), 1000);
    assert.equal(idleDelay(pull({ remaining: 31 }), 59_000, 1000), 1000, 'one spare call, but the floor of spreading is idleMs');
  });

  test('when another connector spends the shared budget, porter idles slower, never faster', () => {
    assert.equal(idleDelay(pull({ remaining: 40 }), 0, 1000), 1000);
  });

  test('a generous budget does not become a busy loop: at most four polls per idleMs', () => {
    assert.equal(idleDelay(pull({ remaining: 100_000, cap: 100_000 }), 0, 1000), 250);
    assert.equal(idleDelay(pull({ remaining: 100_000, cap: 100_000 }), 0, 200), 100);
  });

  test('a rolling window full of idle pulls keeps the steady pace, not a burst whenever the oldest leaves', () => {
    assert.equal(idleDelay(pull({ used: 89, remaining: 31, windowEndsAt: 300 }), 0, 1000), 667);
  });

  test('idling against the real budget for ten minutes: ~667 ms apart, and the reserve is never spent', () => {
    const clock = new FakeClock();
    const budget = new Budget({ perWindow: 120, windowMs: 60_000, share: 1 }, clock);
    const started = clock.now();
    let polls = 0;
    let mostUsed = 0;
    while (clock.now() - started < 600_000) {
      assert.equal(budget.delayFor('pull'), 0);
      budget.take('pull');
      clock.advance(20);
      budget.observe('pull', {});
      polls++;
      const snapshot = budget.snapshot().pull;
      mostUsed = Math.max(mostUsed, snapshot.used);
      clock.advance(idleDelay(snapshot, clock.now(), 1000));
    }
    assert.ok(mostUsed <= 90, `${mostUsed} idle pulls in one window: the reserve of 30 was spent`);
    const interval = 600_000 / polls;
    assert.ok(interval > 660 && interval < 720, `one poll every ${Math.round(interval)} ms`);
  });

  test('never slower than poll.idleMs', () => {
    assert.equal(idleDelay(pull({ remaining: 35 }), 0, 1000), 1000);
    assert.equal(idleDelay(pull({}), 0, 300), 300);
  });
});
