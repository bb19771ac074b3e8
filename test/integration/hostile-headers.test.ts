import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { waitFor } from '../helpers/wait-for.js';
import { SIM_SERVER_ID, startBed, WAIT, type TestBed } from './harness.js';

/**
 * Hostile rate-limit headers through the real CLI: 429s whose Retry-After says "now" (0, negative,
 * a date in the past), one whose Retry-After is beyond what a timer can hold, one given as a date
 * by an API whose clock is 5 minutes ahead, and an
 * X-RateLimit-Remaining that goes up and down as two API nodes counting apart would send it.
 * What must hold: never a call within a second of a 429, never a hot loop, never more of porter's
 * own calls in any rolling window than its share of the budget.
 */

const TOO_MANY = JSON.stringify({ status: 429, code: 'RATE_LIMIT_ERROR', title: 'Too Many Requests' });

function pullsOf(bed: TestBed) {
  return bed.api.requests.filter((r) => r.route === 'pull');
}

/** The most calls of one route that arrived within any `spanMs`. */
function mostWithin(times: readonly number[], spanMs: number): number {
  const sorted = [...times].sort((a, b) => a - b);
  let most = 0;
  for (let i = 0, j = 0; i < sorted.length; i++) {
    while (sorted[i]! - sorted[j]! >= spanMs) j++;
    most = Math.max(most, i - j + 1);
  }
  return most;
}

describe('hostile rate-limit headers through the real CLI', () => {
  test('a 429 saying "retry now" (0, negative, a past date, garbage) still pauses the route for at least a second', async () => {
    // An unreadable Retry-After pauses the route to the end of porter's window: a short one here.
    const bed = await startBed({ api: { budget: { perWindow: 1000, windowMs: 3000 } } });
    try {
      bed.writeConfig((config) => {
        config.api.budget = { perWindow: 120, windowMs: 3000 };
        config.poll.idleMs = 100;
      });
      const retryAfters = ['0', '-5', 'Thu, 01 Jan 1970 00:00:00 GMT', 'soon', '0.001'];
      for (const value of retryAfters) bed.api.inject('pull', { status: 429, body: TOO_MANY, headers: { 'retry-after': value } });
      const porter = bed.spawnPorter();
      await waitFor(
        () => pullsOf(bed).filter((r) => r.status === 429).length === retryAfters.length && pullsOf(bed).at(-1)!.status !== 429,
        {
          ...WAIT,
          what: 'every 429 to be answered and a pull after the last',
        },
      );
      assert.equal(porter.exit, undefined, porter.tail());
      const pulls = pullsOf(bed);
      for (const [index, pull] of pulls.entries()) {
        if (pull.status !== 429) continue;
        const next = pulls[index + 1];
        if (next) assert.ok(next.at - pull.at >= 990, `a pull ${next.at - pull.at} ms after a 429 (${JSON.stringify(pull)})`);
      }
      porter.kill('SIGTERM');
      assert.deepEqual(await porter.waitExit(), { code: 0, signal: null }, porter.tail());
    } finally {
      await bed.close();
    }
  });

  test('a Retry-After beyond any timer is clamped: no spin, no overflow warning, porter keeps running', async () => {
    const bed = await startBed();
    try {
      bed.writeConfig((config) => {
        config.poll.idleMs = 100;
      });
      bed.api.inject('pull', { status: 429, body: TOO_MANY, headers: { 'retry-after': '3000000' } });
      const porter = bed.spawnPorter();
      await waitFor(() => pullsOf(bed).some((r) => r.status === 429), { ...WAIT, what: 'the 429' });
      // Proof that porter kept running while the route was paused: ten more player-list refreshes
      // (refreshMs 200) reached the game server after the 429, none of them a reason to pull.
      const refreshes = () => bed.rcon.executed.filter((e) => e.query).length;
      const before = refreshes();
      await waitFor(() => refreshes() >= before + 10 || porter.exit, {
        ...WAIT,
        what: 'ten player-list refreshes while the route is paused',
      });
      assert.equal(porter.exit, undefined, porter.tail());
      assert.equal(pullsOf(bed).length, 1, 'pulled again during a Retry-After of 3,000,000 s');
      assert.doesNotMatch(porter.stderr, /TimeoutOverflowWarning/);
      porter.kill('SIGTERM');
      assert.deepEqual(await porter.waitExit(), { code: 0, signal: null }, porter.tail());
    } finally {
      await bed.close();
    }
  });

  test('a Retry-After date from an API 5 minutes ahead is measured by its own Date header: porter waits 2 s, not 302 s', async () => {
    const bed = await startBed();
    try {
      bed.writeConfig((config) => {
        config.poll.idleMs = 100;
      });
      // A CDN in front of the API answers in dates (RFC 9110 §10.2.3), from a clock 5 minutes ahead of this host's.
      const apiNow = Date.now() + 300_000;
      const headers = { date: new Date(apiNow).toUTCString(), 'retry-after': new Date(apiNow + 2_000).toUTCString() };
      bed.api.inject('pull', { status: 429, body: TOO_MANY, headers });
      bed.api.enqueue(SIM_SERVER_ID, { command: 'say after the date' });
      const porter = bed.spawnPorter();
      // Measured against porter's own clock the wait would be 302 s: this bound is a fifth of it.
      await waitFor(() => bed.api.commands().every((c) => c.status === 'EXECUTED') || porter.exit, {
        ...WAIT,
        timeoutMs: 60_000,
        what: "the delivery after a 429 whose Retry-After is the API's Date + 2 s",
      });
      assert.equal(porter.exit, undefined, porter.tail());
      const [refused, next] = pullsOf(bed);
      assert.equal(refused?.status, 429);
      assert.ok(
        next && next.at - refused.at >= 1_990,
        `the pull after the 429 came ${next && next.at - refused.at} ms later, within the 2 s asked`,
      );
      porter.kill('SIGTERM');
      assert.deepEqual(await porter.waitExit(), { code: 0, signal: null }, porter.tail());
    } finally {
      await bed.close();
    }
  });

  test('an X-RateLimit-Remaining that goes up and down never lets porter exceed its cap in any rolling window', async () => {
    const perWindow = 10;
    const windowMs = 2000;
    const bed = await startBed({ api: { budget: { perWindow: 1000, windowMs } } });
    try {
      bed.writeConfig((config) => {
        config.api.budget = { perWindow, windowMs };
        config.poll.idleMs = 100;
      });
      // Two API nodes counting apart: the header rises and falls on every answer.
      for (let i = 0; i < 200; i++) {
        const remaining = String(i % 2 === 0 ? perWindow - 1 : perWindow - 2);
        bed.api.inject('pull', { headers: { 'x-ratelimit-remaining': remaining } });
        bed.api.inject('done', { headers: { 'x-ratelimit-remaining': remaining } });
      }
      const texts = Array.from({ length: 30 }, (_, i) => `say header-${i}`);
      for (const command of texts) bed.api.enqueue(SIM_SERVER_ID, { command });
      const porter = bed.spawnPorter();
      await waitFor(() => bed.api.commands().every((c) => c.status === 'EXECUTED') || porter.exit, {
        ...WAIT,
        timeoutMs: 60_000,
        what: '30 deliveries',
      });
      assert.equal(porter.exit, undefined, porter.tail());
      porter.kill('SIGTERM');
      assert.deepEqual(await porter.waitExit(), { code: 0, signal: null }, porter.tail());
      for (const route of ['pull', 'done'] as const) {
        const times = bed.api.requests.filter((r) => r.route === route).map((r) => r.at);
        // Arrival times jitter by a few ms against porter's send times: a slightly shorter span.
        const most = mostWithin(times, windowMs - 50);
        assert.ok(most <= perWindow, `${most} ${route} calls within one rolling ${windowMs} ms window (cap ${perWindow})`);
      }
    } finally {
      await bed.close();
    }
  });
});
