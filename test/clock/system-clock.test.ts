import assert from 'node:assert/strict';
import { describe, mock, test } from 'node:test';
import { MAX_TIMER_MS, systemClock } from '../../src/clock.js';

/** Collects the process warnings of one synchronous block (they are emitted on the next tick). */
async function warningsDuring(block: () => void): Promise<string[]> {
  const seen: string[] = [];
  const onWarning = (warning: Error) => seen.push(`${warning.name}: ${warning.message}`);
  process.on('warning', onWarning);
  try {
    block();
    await new Promise((resolve) => setImmediate(resolve));
  } finally {
    process.off('warning', onWarning);
  }
  return seen;
}

describe('systemClock.now: monotonic whatever the wall clock does', () => {
  test('a wall clock stepped back an hour or forward a day does not move it', () => {
    const before = systemClock.now();
    const wall = mock.method(Date, 'now', () => before - 3_600_000);
    try {
      assert.ok(systemClock.now() >= before, "a step backwards must not take porter's time back");
      wall.mock.mockImplementation(() => before + 86_400_000);
      assert.ok(systemClock.now() < before + 60_000, 'a step forwards must not let a window end early');
    } finally {
      wall.mock.restore();
    }
  });

  test('reads as whole ms since the epoch, close to the wall clock at start', () => {
    const now = systemClock.now();
    assert.ok(Number.isInteger(now));
    assert.ok(Math.abs(now - Date.now()) < 60_000, `${now} vs ${Date.now()}`);
  });
});

describe('systemClock timers: no delay overflows setTimeout', () => {
  test('delays beyond 2^31 − 1 ms give no TimeoutOverflowWarning, nor do negative or NaN ones', async () => {
    const warnings = await warningsDuring(() => {
      systemClock.setTimer!(() => assert.fail('fired early'), 3_000_000_000)();
      systemClock.setTimer!(() => undefined, Number.POSITIVE_INFINITY)();
      systemClock.setTimer!(() => undefined, -5)();
      systemClock.setTimer!(() => undefined, Number.NaN)();
      const controller = new AbortController();
      systemClock.sleep(2 ** 53, controller.signal).catch(() => undefined);
      controller.abort(new Error('done'));
    });
    assert.deepEqual(warnings, []);
  });

  test('a delay beyond the limit runs as a chain of timers and fires on time, not after 1 ms', () => {
    mock.timers.enable({ apis: ['setTimeout'] });
    try {
      let fired = 0;
      systemClock.setTimer!(() => fired++, MAX_TIMER_MS + 5_000);
      mock.timers.tick(1);
      assert.equal(fired, 0, 'an overflowed timer would fire after 1 ms');
      mock.timers.tick(MAX_TIMER_MS - 1);
      assert.equal(fired, 0);
      mock.timers.tick(4_999);
      assert.equal(fired, 0);
      mock.timers.tick(1);
      assert.equal(fired, 1);
    } finally {
      mock.timers.reset();
    }
  });

  test('a long sleep is abortable at any link of the chain', async () => {
    mock.timers.enable({ apis: ['setTimeout'] });
    try {
      const controller = new AbortController();
      const sleeping = systemClock.sleep(MAX_TIMER_MS * 2 + 10, controller.signal);
      mock.timers.tick(MAX_TIMER_MS + 1);
      controller.abort(new Error('stopping'));
      await assert.rejects(sleeping, /stopping/);
    } finally {
      mock.timers.reset();
    }
  });
});
