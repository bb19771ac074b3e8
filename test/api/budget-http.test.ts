import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createApiClient } from '../../src/api/client.js';
import { RateLimitedError } from '../../src/api/errors.js';
import { createServerApi } from '../../src/api/server-api.js';
import { Budget } from '../../src/api/budget.js';
import { systemClock } from '../../src/clock.js';
import { SIM_SERVER_ID, startSellerApi, type FakeSellerApi } from '../../src/sim/seller-api.js';
import { apiConfig, silent } from './helpers.js';

test('300 calls at a shrunk window (20 per 300 ms): never a 429, never early, and not slower than the budget needs', async () => {
  const perWindow = 20;
  const windowMs = 300;
  await withBudgetedApi(perWindow, windowMs, async (api, s) => {
    const started = Date.now();
    // All at once: the per-route lane and the budget must hold them back, not the caller.
    const results = await Promise.all(Array.from({ length: 300 }, () => s.pull([])));
    const elapsed = Date.now() - started;
    assert.equal(results.filter((r) => r.kind === 'empty').length, 300);
    assert.equal(api.requests.filter((r) => r.status === 429).length, 0);
    assert.equal(api.retryAfterViolations, 0);
    assert.equal(api.requests.length, 300);
    // 15 windows are needed; allow for the answer-anchored windows and a slow machine.
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
    assert.equal(await s.done('1'), 'alreadySettled');
  });
});

/** The fake API and a budget-fed server API over real HTTP, both with the same shrunk window. */
async function withBudgetedApi(
  perWindow: number,
  windowMs: number,
  body: (api: FakeSellerApi, s: ReturnType<typeof createServerApi>) => Promise<void>,
): Promise<void> {
  const api = await startSellerApi({ budget: { perWindow, windowMs } });
  const client = createApiClient(apiConfig(api.url), { logger: silent() });
  try {
    const budget = new Budget({ perWindow, windowMs, share: 1 }, systemClock);
    await body(api, createServerApi({ client, serverId: SIM_SERVER_ID, budget, clock: systemClock, logger: silent() }));
  } finally {
    await client.close();
    await api.close();
  }
}
