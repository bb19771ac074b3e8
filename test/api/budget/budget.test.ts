import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Budget, BudgetExceededError, RETRY_AFTER_MAX_MS } from '../../../src/api/budget/budget.js';
import { ConfigError } from '../../../src/errors.js';
import { FakeClock, flush } from '../../helpers/fake-clock.js';

const W = 60_000;

function budget(options: { perWindow?: number; windowMs?: number; share?: number } = {}, clock = new FakeClock()) {
  const b = new Budget({ perWindow: options.perWindow ?? 120, windowMs: options.windowMs ?? W, share: options.share ?? 1 }, clock);
  return { b, clock };
}

/** Takes as long as the budget allows right now; returns how many. */
function drain(b: Budget, route: 'pull' | 'done' | 'fail', max = 10_000): number {
  let n = 0;
  while (n < max && b.delayFor(route) === 0) {
    b.take(route);
    n++;
  }
  return n;
}

describe('Budget: own count per rolling window', () => {
  test('a fresh budget allows perWindow calls, then waits for the end of the window', () => {
    const { b, clock } = budget({ perWindow: 120 });
    assert.equal(b.delayFor('pull'), 0);
    assert.equal(drain(b, 'pull'), 120);
    assert.equal(b.delayFor('pull'), W);
    clock.advance(59_999);
    assert.equal(b.delayFor('pull'), 1);
    clock.advance(1);
    assert.equal(b.delayFor('pull'), 0);
    assert.equal(drain(b, 'pull'), 120, 'a new window gives the full count again');
  });

  test('rolling, not fixed: each call frees its place windowMs after it, not all at once', () => {
    const { b, clock } = budget({ perWindow: 3, windowMs: 1_000 });
    b.take('pull');
    clock.advance(400);
    b.take('pull');
    b.take('pull');
    assert.equal(b.delayFor('pull'), 600);
    clock.advance(600);
    assert.equal(drain(b, 'pull'), 1, 'only the first call has left the window');
    assert.equal(b.delayFor('pull'), 400);
    clock.advance(400);
    assert.equal(drain(b, 'pull'), 2);
  });

  test('a call counts from when it ended: windowMs after its answer (or its failure), not its send', () => {
    const { b, clock } = budget({ perWindow: 1, windowMs: 1_000 });
    b.take('done');
    clock.advance(300); // latency: the platform counted it somewhere in between
    b.observe('done', {});
    assert.equal(b.delayFor('done'), 1_000);
    clock.advance(999);
    assert.equal(b.delayFor('done'), 1);
    clock.advance(1);
    assert.equal(b.delayFor('done'), 0);
  });

  test('the window starts at the first call, not at construction', () => {
    const { b, clock } = budget({ perWindow: 2 });
    clock.advance(500_000);
    b.take('pull');
    clock.advance(10_000);
    b.take('pull');
    assert.equal(b.delayFor('pull'), W - 10_000);
  });

  test('each route has its own window and count', () => {
    const { b, clock } = budget({ perWindow: 3 });
    assert.equal(drain(b, 'pull'), 3);
    assert.ok(b.delayFor('pull') > 0);
    clock.advance(1_000);
    assert.equal(b.delayFor('done'), 0);
    assert.equal(drain(b, 'done'), 3);
    assert.equal(b.delayFor('done'), W);
    assert.equal(b.delayFor('pull'), W - 1_000);
    assert.equal(drain(b, 'fail'), 3);
  });

  test("share: at most floor(perWindow × share) of porter's own calls per window", () => {
    assert.equal(drain(budget({ perWindow: 120, share: 0.5 }).b, 'pull'), 60);
    assert.equal(drain(budget({ perWindow: 10, share: 0.25 }).b, 'pull'), 2);
    assert.equal(drain(budget({ perWindow: 7, share: 0.999 }).b, 'done'), 6);
  });

  test('a take the budget does not allow throws and records nothing', () => {
    const { b, clock } = budget({ perWindow: 1, windowMs: 1_000 });
    b.take('pull');
    assert.throws(
      () => b.take('pull'),
      (error: unknown) => error instanceof BudgetExceededError && /not sent/.test(error.message),
    );
    clock.advance(1_000);
    assert.equal(drain(b, 'pull'), 1);
  });

  test('a call withheld before it was sent gives back what it took; a sent one that got no answer does not', () => {
    const { b, clock } = budget({ perWindow: 2 });
    b.take('pull');
    b.observe('pull', { remaining: 1 });
    b.take('pull');
    assert.equal(b.delayFor('pull'), W, 'both places taken');
    b.withdraw('pull');
    assert.equal(b.delayFor('pull'), 0, 'the withheld call frees its place at once');
    b.take('pull');
    clock.advance(10);
    b.observe('pull', {});
    // Both places are taken again: the oldest (answered at 0) frees first.
    assert.equal(b.delayFor('pull'), W - 10, 'an unanswered call counts, a window from its end');
  });

  test('a budget that allows no call at all is a configuration error that names the keys', () => {
    assert.throws(
      () => budget({ perWindow: 3, share: 0.2 }),
      (error: unknown) => {
        assert.ok(error instanceof ConfigError);
        assert.match(error.message, /api\.budget/);
        assert.match(error.message, /share/);
        return true;
      },
    );
    assert.throws(() => budget({ perWindow: 10, share: 0 }), ConfigError);
  });
});

describe("Budget: answers never widen porter's own count", () => {
  test('a rising X-RateLimit-Remaining never resets the count (two API nodes counting apart: 101, 100, 101, …)', () => {
    const { b, clock } = budget({ perWindow: 120 });
    let sent = 0;
    for (let i = 0; i < 1_000; i++) {
      if (b.delayFor('pull') > 0) break;
      b.take('pull');
      sent++;
      clock.advance(5);
      b.observe('pull', { remaining: i % 2 === 0 ? 101 : 100, limit: 120 });
    }
    assert.equal(sent, 120);
    assert.ok(b.delayFor('pull') > 0);
  });

  test('an honest header that lags by 3 cannot squeeze a 121st call into a window', () => {
    const { b, clock } = budget({ perWindow: 120 });
    const started = clock.now();
    let sent = 0;
    while (b.delayFor('pull') === 0) {
      b.take('pull');
      sent++;
      clock.advance(10);
      b.observe('pull', { remaining: Math.min(119, 120 - sent + 3) });
    }
    assert.equal(sent, 120);
    assert.ok(clock.now() + b.delayFor('pull') >= started + W, 'the 121st call waits until the first left the window');
  });

  test('the count survives a 429: the refused call counted too', () => {
    const { b, clock } = budget({ perWindow: 5 });
    b.take('pull');
    b.observe('pull', { remaining: 0, retryAfterMs: 2_000, limited: true });
    clock.advance(2_000);
    assert.equal(drain(b, 'pull'), 4);
    assert.equal(b.snapshot().pull.used, 5);
  });
});

describe('Budget: X-RateLimit-Remaining', () => {
  test('porter never sends more than the API says is left (the official connector spends too)', () => {
    const { b } = budget({ perWindow: 120 });
    b.take('pull');
    b.observe('pull', { remaining: 3, limit: 120 });
    assert.equal(drain(b, 'pull'), 3);
    assert.ok(b.delayFor('pull') > 0);
    assert.equal(b.snapshot().pull.remaining, 0);
  });

  test('remaining lowers the count mid-window and the own count still applies when it is higher', () => {
    const { b } = budget({ perWindow: 10, share: 0.5 });
    b.take('done');
    b.observe('done', { remaining: 100 });
    assert.equal(drain(b, 'done'), 4, 'own cap 5, one used');
    const { b: b2 } = budget({ perWindow: 10, share: 0.5 });
    b2.take('done');
    b2.observe('done', { remaining: 2 });
    assert.equal(drain(b2, 'done'), 2);
  });

  test("remaining 0 waits for the end of porter's window", () => {
    const { b, clock } = budget({ perWindow: 120 });
    b.take('fail');
    clock.advance(200);
    b.observe('fail', { remaining: 0 });
    assert.equal(b.delayFor('fail'), W);
    clock.advance(W);
    assert.equal(b.delayFor('fail'), 0);
  });

  test('a smaller X-RateLimit-Limit lowers the cap', () => {
    const { b } = budget({ perWindow: 120, share: 0.5 });
    b.take('pull');
    b.observe('pull', { remaining: 59, limit: 60 });
    assert.equal(b.snapshot().pull.cap, 30);
    assert.equal(drain(b, 'pull'), 29);
  });

  test('a low remaining holds for windowMs after its answer, the end of the platform window at the latest', () => {
    const { b, clock } = budget({ perWindow: 10 });
    b.take('pull');
    clock.advance(50);
    b.observe('pull', { remaining: 3 }); // another connector spent 6
    const until = clock.now() + W;
    clock.advance(1_000);
    assert.equal(drain(b, 'pull'), 3);
    assert.equal(b.delayFor('pull'), W - 1_000);
    clock.set(until - 1);
    assert.equal(b.delayFor('pull'), 1);
    clock.set(until);
    assert.equal(drain(b, 'pull'), 7, "porter's own three later calls still count");
  });

  test("headers that only count porter's own calls keep the end; more spending elsewhere moves it later", () => {
    const { b, clock } = budget({ perWindow: 10 });
    b.take('pull');
    b.observe('pull', { remaining: 5 });
    const firstEnd = b.snapshot().pull.windowEndsAt;
    clock.advance(1_000);
    b.take('pull');
    b.observe('pull', { remaining: 4 });
    assert.equal(b.snapshot().pull.windowEndsAt, firstEnd, 'the same platform window');
    clock.advance(1_000);
    b.take('pull');
    b.observe('pull', { remaining: 1 }); // the other connector spent 2 more
    assert.equal(b.snapshot().pull.windowEndsAt, clock.now() + W);
    assert.equal(b.snapshot().pull.apiRemaining, 1);
  });

  test('alone, the headers never hold porter back below its own count', () => {
    const { b, clock } = budget({ perWindow: 10, windowMs: 1_000 });
    let platform = 0;
    for (let i = 0; i < 10; i++) {
      b.take('pull');
      clock.advance(10);
      b.observe('pull', { remaining: 10 - ++platform, limit: 10 });
    }
    assert.equal(b.delayFor('pull'), 1_000 - 90, 'the first call leaves the window first');
    clock.advance(910);
    assert.equal(drain(b, 'pull'), 1);
  });

  test('garbage header values are ignored', () => {
    const { b } = budget({ perWindow: 4 });
    b.take('pull');
    b.observe('pull', { remaining: Number.NaN, limit: -1 });
    b.observe('pull', { remaining: Number.POSITIVE_INFINITY });
    assert.equal(drain(b, 'pull'), 3);
  });
});

describe('Budget: 429 and Retry-After', () => {
  test('nothing to that route until Retry-After has passed, to the millisecond', () => {
    const { b, clock } = budget({ perWindow: 120 });
    b.take('pull');
    clock.advance(40);
    b.observe('pull', { remaining: 0, retryAfterMs: 7_000, limited: true });
    const until = clock.now() + 7_000;
    assert.equal(b.delayFor('pull'), 7_000);
    clock.set(until - 1);
    assert.equal(b.delayFor('pull'), 1, 'one millisecond early is still too early');
    clock.set(until);
    assert.equal(b.delayFor('pull'), 0);
    assert.equal(b.delayFor('done'), 0, 'other routes keep their own budgets');
  });

  test('a fractional Retry-After is rounded up, never down', () => {
    const { b, clock } = budget();
    b.take('done');
    b.observe('done', { retryAfterMs: 1_500.2, limited: true });
    assert.equal(b.delayFor('done'), 1_501);
    clock.advance(1_500);
    assert.equal(b.delayFor('done'), 1);
  });

  test('after Retry-After porter sends again, within its own count', () => {
    const { b, clock } = budget({ perWindow: 5 });
    b.take('pull');
    b.observe('pull', { remaining: 0, retryAfterMs: 2_000, limited: true });
    clock.advance(1_999);
    assert.equal(b.delayFor('pull'), 1);
    clock.advance(1);
    assert.equal(drain(b, 'pull'), 4);
  });

  test('a 429 without Retry-After stops the route for a whole window: the window that refused the call has ended by then', () => {
    const { b, clock } = budget({ perWindow: 5 });
    b.take('fail');
    b.observe('fail', { remaining: 4 });
    clock.advance(10_000);
    b.take('fail');
    b.observe('fail', { limited: true });
    assert.equal(b.delayFor('fail'), W);
    assert.equal(b.delayFor('done'), 0);
  });

  test('a 429 pauses at least 1 s whatever Retry-After says: 0, negative, unreadable, a past date', () => {
    for (const retryAfterMs of [0, -5_000, 0.4, 999]) {
      const { b, clock } = budget({ perWindow: 120, windowMs: 500 });
      b.take('pull');
      b.observe('pull', { retryAfterMs, limited: true });
      assert.equal(b.delayFor('pull'), 1_000, `Retry-After ${retryAfterMs} ms`);
      clock.advance(999);
      assert.equal(b.delayFor('pull'), 1);
      clock.advance(1);
      assert.equal(b.delayFor('pull'), 0);
    }
    const { b } = budget({ perWindow: 120, windowMs: 500 });
    b.take('pull');
    b.observe('pull', { retryAfterMs: Number.NaN, limited: true });
    assert.equal(b.delayFor('pull'), 1_000, 'no usable value: a whole window, and never under the floor');
  });

  test('an absurd Retry-After is clamped to one hour, never overflows into a short wait', () => {
    for (const retryAfterMs of [3_000_000_000, 2 ** 31, Number.POSITIVE_INFINITY]) {
      const { b, clock } = budget();
      b.take('pull');
      b.observe('pull', { retryAfterMs, limited: true });
      assert.equal(b.delayFor('pull'), RETRY_AFTER_MAX_MS);
      clock.advance(RETRY_AFTER_MAX_MS);
      assert.equal(b.delayFor('pull'), 0);
    }
  });

  test('a 429 is honoured even when the header still claims calls are left', () => {
    const { b } = budget({ perWindow: 120 });
    b.take('pull');
    b.observe('pull', { remaining: 50, retryAfterMs: 3_000, limited: true });
    assert.equal(b.delayFor('pull'), 3_000);
  });

  test('a second, shorter Retry-After does not shorten the wait', () => {
    const { b } = budget();
    b.take('pull');
    b.observe('pull', { retryAfterMs: 5_000, limited: true });
    b.observe('pull', { retryAfterMs: 1_000, limited: true });
    assert.equal(b.delayFor('pull'), 5_000);
  });
});

describe('Budget: acquire', () => {
  test('waits on the clock until the window ends, then takes', async () => {
    const { b, clock } = budget({ perWindow: 1, windowMs: 1_000 });
    await b.acquire('pull');
    let acquired = false;
    const pending = b.acquire('pull').then(() => {
      acquired = true;
    });
    await flush();
    assert.equal(clock.sleeping, 1);
    clock.advance(999);
    await flush();
    assert.equal(acquired, false);
    clock.advance(1);
    await pending;
    assert.equal(acquired, true);
    assert.equal(b.snapshot().pull.used, 1);
  });

  test('is abortable while waiting, and takes nothing when aborted', async () => {
    const { b, clock } = budget({ perWindow: 1, windowMs: 1_000 });
    await b.acquire('done');
    const controller = new AbortController();
    const pending = b.acquire('done', controller.signal);
    await flush();
    controller.abort(new Error('stopping'));
    await assert.rejects(pending, /stopping/);
    clock.advance(1_000);
    assert.equal(b.snapshot().done.used, 0);
    assert.equal(b.delayFor('done'), 0);
  });

  test('an already aborted signal rejects at once', async () => {
    const { b } = budget();
    const controller = new AbortController();
    controller.abort(new Error('gone'));
    await assert.rejects(b.acquire('pull', controller.signal), /gone/);
  });
});

describe('Budget: snapshot', () => {
  test('reports remaining, used, cap and waits per route', () => {
    const { b, clock } = budget({ perWindow: 10, share: 0.5 });
    b.take('pull');
    b.take('pull');
    b.observe('pull', { remaining: 8 });
    b.take('fail');
    b.observe('fail', { retryAfterMs: 4_000, limited: true });
    const snap = b.snapshot();
    assert.deepEqual(
      { remaining: snap.pull.remaining, used: snap.pull.used, cap: snap.pull.cap, delay: snap.pull.delayMs },
      { remaining: 3, used: 2, cap: 5, delay: 0 },
    );
    assert.equal(snap.done.remaining, 5);
    assert.equal(snap.done.windowEndsAt, undefined);
    assert.equal(snap.fail.blockedUntil, clock.now() + 4_000);
    assert.equal(snap.fail.delayMs, 4_000);
  });
});

describe('Budget against a model platform', () => {
  /**
   * A platform with fixed windows that start at the first request it receives, a network latency
   * each way, and optionally another connector spending the same budget. Returns how often porter
   * was answered 429 and how often it called while a Retry-After was still running.
   */
  function simulate(otherRate: number, seedStart: number) {
    const clock = new FakeClock();
    const windowMs = 1_000;
    const perWindow = 10;
    const b = new Budget({ perWindow, windowMs, share: 1 }, clock);
    let platformStart: number | undefined;
    let platformCount = 0;
    let retryUntil = 0;
    let rateLimited = 0;
    let violations = 0;
    let porterCalls = 0;
    let seed = seedStart;
    const random = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const platformCall = (at: number, who: 'porter' | 'other') => {
      if (who === 'porter' && at < retryUntil) violations++;
      if (platformStart === undefined || at >= platformStart + windowMs) {
        platformStart = at;
        platformCount = 0;
      }
      if (platformCount >= perWindow) {
        const retryAfterMs = Math.max(1, Math.ceil((platformStart + windowMs - at) / 1000)) * 1000;
        if (who === 'porter') {
          rateLimited++;
          retryUntil = at + retryAfterMs;
        }
        return { status: 429 as const, remaining: 0, retryAfterMs };
      }
      platformCount++;
      return { status: 200 as const, remaining: perWindow - platformCount };
    };
    for (let step = 0; step < 20_000; step++) {
      if (random() < otherRate) platformCall(clock.now(), 'other');
      const delay = b.delayFor('pull');
      if (delay > 0) {
        clock.advance(Math.min(delay, 1 + Math.floor(random() * 30)));
        continue;
      }
      b.take('pull');
      porterCalls++;
      clock.advance(Math.floor(random() * 40)); // request latency
      const answer = platformCall(clock.now(), 'porter');
      clock.advance(Math.floor(random() * 40)); // answer latency
      b.observe(
        'pull',
        answer.status === 429 ? { remaining: 0, retryAfterMs: answer.retryAfterMs, limited: true } : { remaining: answer.remaining },
      );
    }
    return { rateLimited, violations, porterCalls };
  }

  test('alone, porter is never answered 429 despite latency shifting the windows', () => {
    for (const seed of [1, 7, 42, 1234]) {
      const { rateLimited, violations, porterCalls } = simulate(0, seed);
      assert.equal(rateLimited, 0, `seed ${seed}`);
      assert.equal(violations, 0);
      assert.ok(porterCalls > 1_000, `porter made ${porterCalls} calls: the budget must not starve it`);
    }
  });

  test('beside another connector, porter never calls before Retry-After ran out', () => {
    for (const seed of [3, 99]) {
      const { violations, porterCalls } = simulate(0.2, seed);
      assert.equal(violations, 0, `seed ${seed}`);
      assert.ok(porterCalls > 100);
    }
  });
});
