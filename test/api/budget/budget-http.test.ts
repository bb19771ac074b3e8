import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createApiClient } from '../../../src/api/wire/client.js';
import { RateLimitedError } from '../../../src/api/errors.js';
import { createServerApi } from '../../../src/api/server-api.js';
import { Budget } from '../../../src/api/budget/budget.js';
import { SIM_SERVER_ID, startSellerApi, type FakeSellerApi } from '../../../src/sim/faults/seller-api.js';
import { FakeClock } from '../../helpers/fake-clock.js';
import { waitFor } from '../../helpers/wait-for.js';
import { apiConfig, silent } from '../helpers.js';

test('300 calls at a shrunk window (20 per 300 ms): never a 429, never early, and not slower than the budget needs', async () => {
  const perWindow = 20;
  const windowMs = 300;
  await withBudgetedApi(perWindow, windowMs, async (api, s, clock) => {
    const started = clock.now();
    // All at once: the per-route lane and the budget must hold them back, not the caller.
    const results = await Promise.all(Array.from({ length: 300 }, () => s.pull([])));
    const elapsed = clock.now() - started;
    assert.equal(results.filter((r) => r.kind === 'empty').length, 300);
    assert.equal(api.requests.filter((r) => r.status === 429).length, 0);
    assert.equal(api.retryAfterViolations, 0);
    assert.equal(api.requests.length, 300);
    // 15 windows are needed; allow for the answer-anchored windows. Time here is the fake clock's,
    // moved only while porter waits for its budget: the figure does not depend on the machine.
    assert.ok(elapsed >= 14 * windowMs, `finished in ${elapsed} ms: faster than the budget allows`);
    assert.ok(elapsed < 15 * windowMs * 2.5, `took ${elapsed} ms`);
  });
});

test('beside another connector spending the same route: 429s are honoured, nothing is sent early, done/fail unaffected', async () => {
  const perWindow = 10;
  const windowMs = 300;
  await withBudgetedApi(perWindow, windowMs, async (api, s) => {
    let ok = 0;
    let limited = 0;
    while (ok < 6) {
      try {
        await s.pull([]);
        ok++;
        // The official connector calls right after each of porter's answers, so the
        // X-RateLimit-Remaining porter just read is already stale: its next call can meet a 429.
        api.spend(SIM_SERVER_ID, 'pull', 3);
      } catch (error) {
        if (!(error instanceof RateLimitedError)) throw error;
        limited++;
      }
    }
    assert.ok(limited > 0, 'the other connector should have pushed porter into a 429');
    assert.equal(api.retryAfterViolations, 0);
    assert.equal(limited, s.stats().rateLimited);
    assert.equal(((await s.done('1')) as { kind?: string }).kind, 'alreadySettled');
  });
});

/**
 * The fake API and a budget-fed server API over real HTTP, both with the same shrunk window and
 * the same fake clock. The clock moves only while porter parks on its budget (then straight to
 * the end of that wait), never while a request is on the wire: how fast this machine answers
 * cannot move a call from one window to the next.
 */
async function withBudgetedApi(
  perWindow: number,
  windowMs: number,
  body: (api: FakeSellerApi, s: ReturnType<typeof createServerApi>, clock: FakeClock) => Promise<void>,
): Promise<void> {
  const clock = new FakeClock();
  const api = await startSellerApi({ budget: { perWindow, windowMs }, clock });
  // The request deadline stays on real time (apiConfig's generous one): it only bounds a broken run.
  const client = createApiClient(apiConfig(api.url), { logger: silent() });
  let finished = false;
  const driver = (async () => {
    while (!finished) {
      await waitFor(() => finished || clock.sleeping > 0, {
        intervalMs: 1,
        timeoutMs: 120_000,
        what: 'porter to call or to wait for its budget',
      });
      const next = clock.nextWakeAt;
      if (!finished && next !== undefined) clock.set(next);
    }
  })();
  try {
    const budget = new Budget({ perWindow, windowMs, share: 1 }, clock);
    await body(api, createServerApi({ client, serverId: SIM_SERVER_ID, budget, clock, logger: silent() }), clock);
  } finally {
    finished = true;
    await driver;
    await client.close();
    await api.close();
  }
}
