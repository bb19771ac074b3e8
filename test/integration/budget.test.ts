import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { waitFor } from '../helpers/wait-for.js';
import { acceptedReports, SIM_SERVER_ID, startBed, WAIT } from './harness.js';

/**
 * "The budget never exceeded at a shrunk window" and "429 honoured", through the
 * real CLI. The fake Seller API counts every request per route and window and remembers each
 * Retry-After it gave, so a request that came too early is counted, not guessed at.
 */

describe('the call budget through the real CLI', () => {
  test('40 commands at 10 calls per second per route: all delivered, not one 429, not one early request', async (t) => {
    const bed = await startBed({ api: { budget: { perWindow: 10, windowMs: 1000 } } });
    try {
      bed.writeConfig((config) => {
        config.api.budget = { perWindow: 10, windowMs: 1000 };
        config.poll.idleMs = 100;
      });
      const texts = Array.from({ length: 40 }, (_, i) => `say budget-${i}`);
      for (const command of texts) bed.api.enqueue(SIM_SERVER_ID, { command });
      const porter = bed.spawnPorter();
      await waitFor(() => bed.api.commands().every((c) => c.status === 'EXECUTED') || porter.exit, { ...WAIT, what: '40 deliveries' });
      assert.equal(porter.exit, undefined, porter.tail());
      // A few idle pulls after the queue drained run into the budget's pacing too.
      const drainedAt = Date.now();
      await waitFor(() => bed.api.requests.filter((r) => r.route === 'pull' && r.at > drainedAt).length >= 12, {
        ...WAIT,
        what: 'idle pulls after the drain',
      });
      porter.kill('SIGTERM');
      assert.deepEqual(await porter.waitExit(), { code: 0, signal: null }, porter.tail());

      const requests = bed.api.requests;
      const limited = requests.filter((r) => r.status === 429);
      assert.equal(limited.length, 0, `429 answers: ${JSON.stringify(limited)}`);
      assert.equal(bed.api.retryAfterViolations, 0);
      for (const command of bed.api.commands()) assert.equal(acceptedReports(command), 1);
      assert.deepEqual(bed.ran().sort(), [...texts].sort());
      // The pacing really bit: 40 claims + 40 reports cannot fit in fewer than four windows per route.
      const pulls = requests.filter((r) => r.route === 'pull');
      const span = pulls.at(-1)!.at - pulls[0]!.at;
      assert.ok(span >= 4000, `pulls spread over only ${span} ms`);
      t.diagnostic(`${pulls.length} pulls, ${requests.filter((r) => r.route === 'done').length} done calls over ${span} ms; 0 × 429`);
    } finally {
      await bed.close();
    }
  });

  test('the fake allows less than porter believes and another connector spends it: porter gets 429s, waits them out, delivers everything', async (t) => {
    // Porter is configured for 120 per window; the store allows 5 per 3 s per route.
    const bed = await startBed({ api: { budget: { perWindow: 5, windowMs: 3000 } } });
    try {
      bed.writeConfig((config) => {
        config.api.budget = { perWindow: 120, windowMs: 3000 };
        config.poll.idleMs = 100;
      });
      const texts = Array.from({ length: 8 }, (_, i) => `say limited-${i}`);
      for (const command of texts) bed.api.enqueue(SIM_SERVER_ID, { command });
      const { api } = bed;
      const count = (route: string, status: number) => api.requests.filter((r) => r.route === route && r.status === status).length;
      // The official connector spends the whole pull window until porter's first call arrives, so
      // that call meets a 429 however long porter takes to start.
      const spendPulls = () => api.spend(SIM_SERVER_ID, 'pull', api.remaining(SIM_SERVER_ID, 'pull'));
      spendPulls();
      const porter = bed.spawnPorter();

      // Then, twice, right after one of porter's done calls got through, it eats the rest of that
      // window: porter still believes calls are left, sends one, and meets a 429.
      let stolenAfter = -1;
      await waitFor(
        () => {
          if (porter.exit) return true;
          if (!api.requests.some((r) => r.route === 'pull')) spendPulls();
          const accepted = count('done', 200);
          if (count('done', 429) < 2 && accepted > stolenAfter && accepted > 0 && api.remaining(SIM_SERVER_ID, 'done') > 0) {
            api.spend(SIM_SERVER_ID, 'done', api.remaining(SIM_SERVER_ID, 'done'));
            stolenAfter = accepted;
          }
          return api.commands().every((c) => c.status === 'EXECUTED');
        },
        { ...WAIT, timeoutMs: 45_000, what: 'every command delivered despite the 429s' },
      );
      assert.equal(porter.exit, undefined, porter.tail());
      porter.kill('SIGTERM');
      assert.deepEqual(await porter.waitExit(), { code: 0, signal: null }, porter.tail());

      const limited = api.requests.filter((r) => r.status === 429);
      assert.equal(api.requests.find((r) => r.route === 'pull')?.status, 429, 'the first pull should have met a 429');
      assert.ok(count('done', 429) >= 1, 'a done call should have met a 429');
      assert.equal(api.retryAfterViolations, 0, JSON.stringify(api.requests.filter((r) => r.retryAfterViolation)));
      for (const command of api.commands()) assert.equal(acceptedReports(command), 1, JSON.stringify(command.reports));
      assert.deepEqual(bed.ran().sort(), [...texts].sort());
      assert.equal(porter.events('api.ratelimited').length, limited.length, 'each 429 is logged');
      t.diagnostic(
        `${limited.length} × 429 (pull ${count('pull', 429)}, done ${count('done', 429)}), 0 requests before Retry-After ran out`,
      );
    } finally {
      await bed.close();
    }
  });
});
