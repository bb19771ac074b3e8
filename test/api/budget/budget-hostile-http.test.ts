import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type OutgoingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { createApiClient } from '../../../src/api/wire/client.js';
import { createServerApi } from '../../../src/api/server-api.js';
import { Budget, RETRY_AFTER_MAX_MS } from '../../../src/api/budget/budget.js';
import { SIM_SERVER_ID } from '../../../src/sim/seller-api.js';
import { FixedWindows } from '../../../src/sim/seller-api-limits.js';
import { FakeClock } from '../../helpers/fake-clock.js';
import { waitFor } from '../../helpers/wait-for.js';
import { apiConfig, capturingLogger, silent } from '../helpers.js';

/**
 * The budget through the real HTTP path against an API that lies in its headers. The API runs on
 * 127.0.0.1 and stamps every request with the fake clock, which only moves when porter waits for
 * its budget: so every count below is in porter's own time, and no test waits for real seconds.
 */

const W = 60_000;
const CAP = 120;

interface HostileAnswer {
  readonly status: number;
  readonly headers?: OutgoingHttpHeaders;
  readonly body?: string;
  /** False: no `Date` header (Node's server sends one by default, from this machine's clock). */
  readonly sendDate?: false;
}

interface Arrival {
  readonly at: number;
  readonly status: number;
}

/** An API on 127.0.0.1 that answers the n-th request as told; `at` is the fake clock's time. */
async function startHostileApi(clock: FakeClock, answer: (n: number, at: number) => HostileAnswer) {
  const arrivals: Arrival[] = [];
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const at = clock.now();
      const reply = answer(arrivals.length, at);
      arrivals.push({ at, status: reply.status });
      if (reply.sendDate === false) res.sendDate = false;
      res.writeHead(reply.status, { 'content-type': 'application/problem+json', ...reply.headers });
      res.end(reply.body ?? '');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    arrivals,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Pulls `calls` times; whenever porter parks on the budget, moves the fake clock as far as it asked. */
async function drive(calls: number, answer: (n: number, at: number) => HostileAnswer, logger: Logger = silent()) {
  const clock = new FakeClock();
  const api = await startHostileApi(clock, answer);
  const client = createApiClient(apiConfig(api.url), { logger: silent() });
  const budget = new Budget({ perWindow: CAP, windowMs: W, share: 1 }, clock);
  const s = createServerApi({ client, serverId: SIM_SERVER_ID, budget, clock, logger });
  const started = clock.now();
  /** Pulls that ended in an error other than a 429 (a transport fault on a loaded machine): an arrival may be missing for each. */
  const failed: string[] = [];
  try {
    for (let i = 0; i < calls; i++) {
      let settled = false;
      const pending = s.pull([]).then(
        () => (settled = true),
        (error: unknown) => {
          if ((error as { status?: number }).status !== 429) failed.push(`pull ${i}: ${String(error)}`);
          settled = true;
        },
      );
      for (;;) {
        await waitFor(() => settled || clock.sleeping > 0, { intervalMs: 1, what: 'the pull to end or to wait for the budget' });
        if (settled) break;
        clock.advance(budget.delayFor('pull'));
      }
      await pending;
    }
  } finally {
    await client.close();
    await api.close();
  }
  return { arrivals: api.arrivals, elapsed: clock.now() - started, failed };
}

/** Most requests that arrived within any rolling window of `windowMs`. */
function mostInAnyWindow(arrivals: readonly Arrival[], windowMs: number): number {
  let most = 0;
  let first = 0;
  for (let last = 0; last < arrivals.length; last++) {
    while (arrivals[first]!.at <= arrivals[last]!.at - windowMs) first++;
    most = Math.max(most, last - first + 1);
  }
  return most;
}

/** For every 429: how long until the next request arrived. */
function gapsAfter429(arrivals: readonly Arrival[]): number[] {
  return arrivals.flatMap((a, i) => (a.status === 429 && i + 1 < arrivals.length ? [arrivals[i + 1]!.at - a.at] : []));
}

const tooMany = (headers: OutgoingHttpHeaders, body = ''): HostileAnswer => ({ status: 429, headers, body });

describe('Budget over HTTP against hostile headers', () => {
  test('X-RateLimit-Remaining alternating 101 / 100 / 101 (two API nodes): never more than the cap in any rolling window', async () => {
    const { arrivals, failed } = await drive(300, (n) => ({
      status: 204,
      headers: { 'x-ratelimit-limit': '120', 'x-ratelimit-remaining': n % 2 === 0 ? '101' : '100' },
    }));
    // A pull that failed on the way counted against the budget without arriving: say so rather than "starved".
    assert.deepEqual(failed, [], 'every pull got an answer');
    assert.equal(mostInAnyWindow(arrivals, W), CAP);
    assert.equal(arrivals.filter((a) => a.at < arrivals[0]!.at + W).length, CAP, 'and the budget is used, not starved');
  });

  test('an honest X-RateLimit-Remaining that lags by 3 calls still cannot buy a 121st call', async () => {
    const platform = new FixedWindows(CAP, W);
    const told: number[] = [];
    const { arrivals } = await drive(400, (_n, at) => {
      told.push(platform.check('pull', at).remaining);
      return { status: 204, headers: { 'x-ratelimit-limit': '120', 'x-ratelimit-remaining': String(told.at(-4) ?? CAP - 1) } };
    });
    assert.equal(mostInAnyWindow(arrivals, W), CAP);
  });

  for (const [name, retryAfter] of [
    ['Retry-After: 0', '0'],
    ['a Retry-After date in the past', 'Thu, 01 Jan 1970 00:00:00 GMT'],
  ] as const) {
    test(`429 with ${name}: one call a second at most, never a hot loop`, async () => {
      const { arrivals, elapsed } = await drive(20, () => tooMany({ 'retry-after': retryAfter }));
      assert.equal(arrivals.length, 20);
      for (const gap of gapsAfter429(arrivals)) assert.ok(gap >= 1_000, `a call ${gap} ms after a 429`);
      assert.ok(elapsed >= 19 * 1_000);
    });
  }

  test('429 with Retry-After: -5, garbage or none: no usable hint, so a whole window (never less than the 1 s floor)', async () => {
    for (const headers of [{ 'retry-after': '-5' }, { 'retry-after': 'soon' }, {}]) {
      const { arrivals } = await drive(4, () => tooMany(headers));
      for (const gap of gapsAfter429(arrivals)) assert.ok(gap >= W, `${JSON.stringify(headers)}: a call ${gap} ms after a 429`);
    }
  });

  test('429 with a Retry-After date from an API 5 minutes ahead: measured against its own Date header, so 2 s, not 302 s', async () => {
    const { arrivals } = await drive(4, () => {
      const apiNow = Date.now() + 300_000;
      return tooMany({ date: new Date(apiNow).toUTCString(), 'retry-after': new Date(apiNow + 2_000).toUTCString() });
    });
    assert.equal(arrivals.length, 4);
    assert.deepEqual(gapsAfter429(arrivals), [2_000, 2_000, 2_000]);
  });

  test('429 with a Retry-After date and no Date header: no clock of the API to measure it by, so a whole window', async () => {
    const { arrivals } = await drive(3, () => ({
      ...tooMany({ 'retry-after': new Date(Date.now() + 2_000).toUTCString() }),
      sendDate: false,
    }));
    for (const gap of gapsAfter429(arrivals)) assert.ok(gap >= W, `a call ${gap} ms after a 429`);
  });

  test('retryAfterSeconds in the body counts too: the longer of header and body', async () => {
    const { arrivals } = await drive(5, () =>
      tooMany({ 'retry-after': '0' }, JSON.stringify({ status: 429, code: 'RATE_LIMIT_ERROR', retryAfterSeconds: 7 })),
    );
    for (const gap of gapsAfter429(arrivals)) assert.ok(gap >= 7_000, `a call ${gap} ms after a 429`);
  });

  test('Retry-After: 3000000 is clamped to one hour with one warning, and no timer overflows', async () => {
    const { logger, lines } = capturingLogger();
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(warning.name);
    process.on('warning', onWarning);
    try {
      const { arrivals } = await drive(4, () => tooMany({ 'retry-after': '3000000' }), logger);
      for (const gap of gapsAfter429(arrivals)) assert.equal(gap, RETRY_AFTER_MAX_MS);
    } finally {
      process.off('warning', onWarning);
    }
    const capped = lines.filter((l) => l.event === 'api.retryafter.capped');
    assert.deepEqual(
      capped.map((l) => [l.level, l.retryAfterMs]),
      [[40, 3_000_000_000]],
      'one warning, not one per 429',
    );
    assert.deepEqual(warnings, []);
  });

  test('a 429 between honest answers: the refused call still counts, and Retry-After is waited out', async () => {
    const { arrivals } = await drive(400, (n) =>
      n % 50 === 49
        ? tooMany({ 'retry-after': '2', 'x-ratelimit-remaining': '0', 'x-ratelimit-limit': '120' })
        : { status: 204, headers: { 'x-ratelimit-limit': '120', 'x-ratelimit-remaining': '119' } },
    );
    assert.ok(mostInAnyWindow(arrivals, W) <= CAP);
    for (const gap of gapsAfter429(arrivals)) assert.ok(gap >= 2_000, `a call ${gap} ms after a 429`);
  });
});
