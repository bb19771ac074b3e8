import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createApiClient, type ApiClient } from '../../src/api/wire/client.js';
import {
  ApiServerError,
  ApiTransportError,
  InvalidTokenError,
  PlanRequiredError,
  RateLimitedError,
  ScopeMissingError,
  UnknownServerError,
} from '../../src/api/errors.js';
import { createServerApi } from '../../src/api/server-api.js';
import { Budget } from '../../src/api/budget/budget.js';
import { systemClock, type Clock } from '../../src/clock.js';
import { CredentialsError, exitCodeOf, isConfigurationError } from '../../src/errors.js';
import { SIM_SERVER_ID, SIM_TOKEN, startSellerApi, type FakeSellerApi } from '../../src/sim/faults/seller-api.js';
import { FakeClock } from '../helpers/fake-clock.js';
import { waitFor } from '../helpers/wait-for.js';
import { apiConfig, assertNoSecret, capturingLogger, silent } from './helpers.js';

const UNKNOWN_SERVER = '00000000-0000-4000-8000-000000000000';

function serverApi(
  client: ApiClient,
  options: { clock?: Clock; serverId?: string; logger?: ReturnType<typeof silent>; perWindow?: number; windowMs?: number } = {},
) {
  const clock = options.clock ?? systemClock;
  const budget = new Budget({ perWindow: options.perWindow ?? 120, windowMs: options.windowMs ?? 60_000, share: 1 }, clock);
  return createServerApi({ client, serverId: options.serverId ?? SIM_SERVER_ID, budget, clock, logger: options.logger ?? silent() });
}

describe('ServerApi: ids and pull answers', () => {
  let api: FakeSellerApi;
  let client: ApiClient;
  before(async () => {
    api = await startSellerApi({ idStart: 9007199254740993n });
    client = createApiClient(apiConfig(api.url), { logger: silent() });
  });
  after(async () => {
    await client.close();
    await api.close();
  });

  test('an int64 id above 2^53 is reported with the digits it was pulled with', async () => {
    const s = serverApi(client);
    const doneId = api.enqueue(SIM_SERVER_ID, { command: 'say done' });
    const failId = api.enqueue(SIM_SERVER_ID, { command: 'say fail' });
    assert.equal(doneId, '9007199254740993');

    const first = await s.pull([]);
    assert.deepEqual(first, { kind: 'claimed', id: '9007199254740993', command: 'say done' });
    assert.equal(await s.done(first.kind === 'claimed' ? first.id : ''), 'accepted');
    const second = await s.pull([]);
    assert.equal(second.kind === 'claimed' && second.id, '9007199254740994');
    assert.equal(await s.fail(failId, 'no such player'), 'accepted');

    const reports = api.requests.filter((r) => r.route !== 'pull');
    assert.deepEqual(
      reports.map((r) => [r.route, r.commandId, r.status]),
      [
        ['done', '9007199254740993', 200],
        ['fail', '9007199254740994', 200],
      ],
    );
    assert.deepEqual(
      api.commands().map((c) => [c.status, c.error]),
      [
        ['EXECUTED', undefined],
        ['FAILED', 'no such player'],
      ],
    );
  });

  test('ids sent as digit strings work the same', async () => {
    const strings = await startSellerApi({ idStart: 9223372036854775806n, idAsString: true });
    const c = createApiClient(apiConfig(strings.url), { logger: silent() });
    try {
      const s = serverApi(c);
      strings.enqueue(SIM_SERVER_ID, { command: 'x' });
      const result = await s.pull([]);
      assert.deepEqual(result, { kind: 'claimed', id: '9223372036854775806', command: 'x' });
      assert.equal(await s.done('9223372036854775806'), 'accepted');
      assert.equal(strings.commands()[0]!.status, 'EXECUTED');
    } finally {
      await c.close();
      await strings.close();
    }
  });

  test('every "nothing due" shape is empty; bad ids and broken bodies are unusable; nothing throws', async () => {
    const s = serverApi(client);
    assert.deepEqual(await s.pull([]), { kind: 'empty', status: 204 });
    for (const body of ['', 'null', '{}', '{"command":"x"}', '{"id":null}']) {
      api.inject('pull', { body });
      assert.deepEqual(await s.pull([]), { kind: 'empty', status: 200 }, JSON.stringify(body));
    }
    api.inject('pull', { body: '', status: 202 });
    assert.deepEqual(await s.pull([]), { kind: 'empty', status: 202 });
    for (const body of ['{"id":"abc","command":"x"}', '{"id":1.5,"command":"x"}', '[1]']) {
      api.inject('pull', { body });
      assert.equal((await s.pull([])).kind, 'unusable', body);
    }
    api.inject('pull', 'malformed');
    const malformed = await s.pull([]);
    assert.equal(malformed.kind, 'unusable');
    assert.match((malformed as { reason: string }).reason, /not valid JSON/);
    api.inject('pull', { body: '{"id":77,"command":{"not":"a string"}}' });
    assert.deepEqual(await s.pull([]), { kind: 'claimed', id: '77', command: { not: 'a string' } });
    const stats = s.stats();
    assert.equal(stats.pulls.unusable, 4);
    assert.equal(stats.pulls.claimed, 1);
  });

  test("each answer's api.answered line is logged through the server's logger, which names it", async () => {
    const { logger, lines } = capturingLogger();
    const s = serverApi(client, { logger: logger.child({ server: 'eu-1' }) });
    await s.pull([]);
    assert.deepEqual(
      lines.filter((line) => line.event === 'api.answered').map(({ server, serverId, route }) => ({ server, serverId, route })),
      [{ server: 'eu-1', serverId: undefined, route: 'pull' }],
    );
  });

  test('404 and 409 on done/fail mean already settled', async () => {
    const s = serverApi(client);
    assert.deepEqual(await s.done('123456'), { kind: 'alreadySettled', status: 404, apiCode: 'COMMAND_NOT_FOUND' });
    const id = api.enqueue(SIM_SERVER_ID, { command: 'x' });
    await s.pull([]);
    assert.equal(await s.fail(id, 'first'), 'accepted');
    assert.deepEqual(await s.done(id), { kind: 'alreadySettled', status: 409, apiCode: 'COMMAND_NOT_PROCESSING' });
    assert.equal(s.stats().reports.alreadySettled, 2);
  });

  test('a report whose answer was lost is retried and then found settled', async () => {
    const s = serverApi(client);
    const id = api.enqueue(SIM_SERVER_ID, { command: 'x' });
    await s.pull([]);
    api.inject('done', 'claim-then-reset');
    const lost = await s.done(id).catch((e: unknown) => e);
    assert.ok(lost instanceof ApiTransportError);
    assert.equal(lost.maybeProcessed, true);
    assert.deepEqual(await s.done(id), { kind: 'alreadySettled', status: 409, apiCode: 'COMMAND_NOT_PROCESSING' });
    assert.equal(api.commands().find((c) => c.id === id)!.status, 'EXECUTED');
  });
});

describe('ServerApi: the fail reason', () => {
  test('is cut at 1,000 code points with the closing …, astral characters kept whole, the token scrubbed', async () => {
    const api = await startSellerApi();
    const client = createApiClient(apiConfig(api.url), { logger: silent() });
    try {
      const s = serverApi(client);
      const long = api.enqueue(SIM_SERVER_ID, { command: 'a' });
      await s.pull([]);
      assert.equal(await s.fail(long, '🎮'.repeat(1_500)), 'accepted', 'the fake refuses reasons over 1,000 code points');
      const exact = api.enqueue(SIM_SERVER_ID, { command: 'b' });
      await s.pull([]);
      assert.equal(await s.fail(exact, '🎮'.repeat(1_000)), 'accepted');
      const secret = api.enqueue(SIM_SERVER_ID, { command: 'c' });
      await s.pull([]);
      await s.fail(secret, `script printed ${SIM_TOKEN} on stderr`);

      const [cut, kept, scrubbed] = api.commands().map((c) => c.error!);
      assert.equal(Array.from(cut!).length, 1_000);
      assert.equal(cut, `${'🎮'.repeat(999)}…`);
      assert.equal(kept, '🎮'.repeat(1_000));
      assert.ok(!scrubbed!.includes(SIM_TOKEN));
      assert.match(scrubbed!, /\[Redacted\]/);
    } finally {
      await client.close();
      await api.close();
    }
  });
});

describe('ServerApi: typed errors never carry the token', () => {
  let api: FakeSellerApi;
  before(async () => {
    api = await startSellerApi({ tokens: { [SIM_TOKEN]: ['commands:execute'], gci_only_servers_read: ['servers:read'] } });
  });
  after(() => api.close());

  async function pullError(token: string, serverId = SIM_SERVER_ID): Promise<unknown> {
    const client = createApiClient(apiConfig(api.url, { token }), { logger: silent() });
    try {
      return await serverApi(client, { serverId })
        .pull([])
        .then(
          () => assert.fail('expected an error'),
          (e: unknown) => e,
        );
    } finally {
      await client.close();
    }
  }

  test('401: InvalidTokenError, a credentials error (exit 78) naming the code and what to do', async () => {
    const error = await pullError('gci_revoked_token_value');
    assert.ok(error instanceof InvalidTokenError);
    assert.ok(error instanceof CredentialsError);
    assert.equal(exitCodeOf(error), 78);
    assert.ok(isConfigurationError(error));
    assert.equal(error.status, 401);
    assert.equal(error.apiCode, 'INVALID_INTEGRATION_TOKEN');
    assert.match(error.message, /INVALID_INTEGRATION_TOKEN/);
    assert.match(error.message, /commands:execute/);
    assertNoSecret(error, 'gci_revoked_token_value');
  });

  test('403: ScopeMissingError naming the code and requiredScope (exit 78)', async () => {
    const error = await pullError('gci_only_servers_read');
    assert.ok(error instanceof ScopeMissingError);
    assert.equal(exitCodeOf(error), 78);
    assert.deepEqual(error.requiredScope, ['commands:execute']);
    assert.match(error.message, /INTEGRATION_SCOPE_MISSING/);
    assert.match(error.message, /requiredScope: commands:execute/);
    assert.match(error.message, /create a token with scope commands:execute/);
    assertNoSecret(error, 'gci_only_servers_read');
  });

  test('404 on pull: UnknownServerError naming the server id and the code (exit 78)', async () => {
    const error = await pullError(SIM_TOKEN, UNKNOWN_SERVER);
    assert.ok(error instanceof UnknownServerError);
    assert.equal(exitCodeOf(error), 78);
    assert.match(error.message, new RegExp(UNKNOWN_SERVER));
    assert.match(error.message, /SERVER_NOT_FOUND/);
    assertNoSecret(error, SIM_TOKEN);
  });

  test('402: PlanRequiredError, not a configuration error (the daemon retries slowly)', async () => {
    api.setPlan(false);
    try {
      const error = await pullError(SIM_TOKEN);
      assert.ok(error instanceof PlanRequiredError);
      assert.equal(exitCodeOf(error), 1);
      assert.ok(!isConfigurationError(error));
      assert.match(error.message, /PLAN_FEATURE_REQUIRED/);
      assertNoSecret(error, SIM_TOKEN);
    } finally {
      api.setPlan(true);
    }
  });

  test('5xx: ApiServerError; a problem body that echoes the token is scrubbed', async () => {
    api.inject('pull', '503');
    const error = await pullError(SIM_TOKEN);
    assert.ok(error instanceof ApiServerError);
    assert.equal(error.status, 503);
    assert.equal(error.apiCode, 'SERVICE_UNAVAILABLE');

    api.inject('pull', {
      status: 401,
      contentType: 'application/problem+json',
      body: JSON.stringify({
        status: 401,
        code: 'INVALID_INTEGRATION_TOKEN',
        detail: `token ${SIM_TOKEN} is not valid`,
        traceId: SIM_TOKEN,
      }),
    });
    const echoed = await pullError(SIM_TOKEN);
    assert.ok(echoed instanceof InvalidTokenError);
    assert.match(echoed.detail ?? '', /\[Redacted\]/);
    assertNoSecret(echoed, SIM_TOKEN);
  });

  test('decisions use status and code, never detail', async () => {
    api.inject('pull', {
      status: 403,
      contentType: 'application/problem+json',
      body: JSON.stringify({ status: 403, code: 'SOMETHING_ELSE', detail: 'INTEGRATION_SCOPE_MISSING' }),
    });
    const error = await pullError(SIM_TOKEN);
    assert.ok(!(error instanceof ScopeMissingError));
    assert.ok(!isConfigurationError(error));
  });
});

describe('ServerApi: 429 and transport failures', () => {
  test('429: RateLimitedError, then nothing to that route before Retry-After (the fake counts early requests)', async () => {
    const api = await startSellerApi({ budget: { perWindow: 5, windowMs: 1_000 } });
    const client = createApiClient(apiConfig(api.url), { logger: silent() });
    try {
      const s = serverApi(client); // porter believes 120 per minute: only the 429 can hold it back
      api.spend(SIM_SERVER_ID, 'pull', 5); // the official connector used the window up
      const error = await s.pull([]).catch((e: unknown) => e);
      assert.ok(error instanceof RateLimitedError);
      assert.equal(error.retryAfterMs, 1_000);
      assert.match(error.message, /RATE_LIMIT_ERROR/);
      const before = Date.now();
      assert.equal((await s.pull([])).kind, 'empty');
      const waited = Date.now() - before;
      assert.ok(waited >= 900, `the second pull waited ${waited} ms for Retry-After`);
      assert.ok(waited < 5_000, `the second pull waited ${waited} ms: porter must resume once Retry-After has passed`);
      assert.equal(api.retryAfterViolations, 0);
      assert.equal(s.stats().rateLimited, 1);
      assert.equal(((await s.done('1')) as { kind?: string }).kind, 'alreadySettled', 'other routes were never held back');
    } finally {
      await client.close();
      await api.close();
    }
  });

  test('a 429 is honoured even when its headers still say calls are left', async () => {
    const api = await startSellerApi();
    const client = createApiClient(apiConfig(api.url), { logger: silent() });
    try {
      const s = serverApi(client);
      api.inject('pull', {
        status: 429,
        contentType: 'application/problem+json',
        body: JSON.stringify({ status: 429, code: 'RATE_LIMIT_ERROR', retryAfterSeconds: 1 }),
      });
      // Timed from before the 429 was even asked for: the Retry-After counts from its arrival, so
      // the second pull cannot go sooner than 1 s after this, however late the test itself runs.
      const before = performance.now();
      const error = await s.pull([]).catch((e: unknown) => e);
      assert.ok(error instanceof RateLimitedError);
      assert.equal(error.retryAfterMs, 1_000);
      await s.pull([]);
      const waited = performance.now() - before;
      assert.ok(waited >= 998 && waited < 5_000, `waited ${Math.round(waited)} ms`);
    } finally {
      await client.close();
      await api.close();
    }
  });

  test('resets and timeouts become ApiTransportError and open the claim gap', async () => {
    const api = await startSellerApi();
    // The request deadline on a fake clock: a reset on a slow machine cannot turn into a timeout,
    // and the timeout comes when the test moves the clock, not when a real 200 ms happens to pass.
    const deadlines = new FakeClock();
    const client = createApiClient(apiConfig(api.url, { timeoutMs: 200 }), { logger: silent(), clock: deadlines });
    try {
      const s = serverApi(client);
      api.inject('pull', 'reset');
      const reset = await s.pull([]).catch((e: unknown) => e);
      assert.ok(reset instanceof ApiTransportError);
      assert.equal(reset.failure, 'reset');
      assert.equal(s.stats().claimGapOpen, true);
      api.inject('pull', { delay: 120_000 });
      const pending = s.pull([]).catch((e: unknown) => e);
      await waitFor(() => deadlines.sleeping > 0, { what: 'the pull to start its deadline' });
      deadlines.advance(200);
      const timeout = await pending;
      assert.ok(timeout instanceof ApiTransportError);
      assert.equal(timeout.failure, 'timeout');
      assert.equal(s.stats().pulls.error, 2);
    } finally {
      await client.close();
      await api.close();
    }
  });

  test('a call that got no answer still counts, from the moment it failed', async () => {
    const api = await startSellerApi();
    const client = createApiClient(apiConfig(api.url), { logger: silent() });
    const clock = new FakeClock();
    try {
      const s = serverApi(client, { clock, perWindow: 1, windowMs: 60_000 });
      api.inject('pull', 'reset');
      await assert.rejects(s.pull([]), ApiTransportError);
      const pull = s.stats().budget.pull;
      assert.equal(pull.used, 1);
      assert.equal(pull.delayMs, 60_000);
    } finally {
      await client.close();
      await api.close();
    }
  });

  test('an abort while waiting for the budget sends nothing', async () => {
    const api = await startSellerApi();
    const client = createApiClient(apiConfig(api.url), { logger: silent() });
    try {
      const s = serverApi(client, { perWindow: 1, windowMs: 60_000 });
      await s.pull([]);
      const controller = new AbortController();
      const pending = s.pull([], controller.signal);
      setImmediate(() => controller.abort(new Error('shutting down')));
      await assert.rejects(pending, /shutting down/);
      assert.equal(api.requests.length, 1);
    } finally {
      await client.close();
      await api.close();
    }
  });
});

describe('ServerApi: the claim gap warning', () => {
  test('after a lost pull answer, only empties for more than 60 s log one warning; a claim closes the gap', async () => {
    const api = await startSellerApi();
    const client = createApiClient(apiConfig(api.url), { logger: silent() });
    const clock = new FakeClock();
    const { logger, lines } = capturingLogger();
    try {
      // As porter gives it: a logger that already names the server.
      const s = serverApi(client, { clock, logger: logger.child({ server: 'eu-1' }) });
      const lostId = api.enqueue(SIM_SERVER_ID, { command: 'claimed but never seen' });
      api.enqueue(SIM_SERVER_ID, { command: 'next' });
      api.inject('pull', 'claim-then-reset');
      await assert.rejects(s.pull([]), ApiTransportError);
      assert.equal(api.claimedCount, 1);

      const warnings = () => lines.filter((l) => l.event === 'claim.stuck');
      clock.advance(30_000);
      assert.deepEqual(await s.pull([]), { kind: 'empty', status: 204 });
      clock.advance(30_000);
      await s.pull([]);
      assert.equal(warnings().length, 0, 'exactly 60 s is not longer than a minute');
      clock.advance(1);
      await s.pull([]);
      assert.equal(warnings().length, 1);
      assert.equal(warnings()[0]!.level, 40);
      assert.equal(warnings()[0]!.server, 'eu-1');
      assert.ok(!('serverId' in warnings()[0]!), 'one field names the server');
      assert.match(String(warnings()[0]!.reason), /reset|socket|closed/i);
      // The warning tells the seller what to do about the stuck command.
      assert.match(String(warnings()[0]!.msg), /retry it from the store dashboard/);
      clock.advance(120_000);
      await s.pull([]);
      assert.equal(warnings().length, 1, 'once');
      assert.equal(s.stats().pulls.busy204, 4);

      // The seller settles the stuck command; the next pull claims and closes the gap.
      await client.send({
        method: 'POST',
        path: client.routes.fail(SIM_SERVER_ID, lostId),
        json: { error: 'dashboard' },
        context: { route: 'fail' },
      });
      const next = await s.pull([]);
      assert.equal(next.kind, 'claimed');
      assert.equal(s.stats().claimGapOpen, false);
      assert.ok(lines.some((l) => l.level === 30 && l.event === 'claim.released'));
    } finally {
      await client.close();
      await api.close();
    }
  });

  test('a malformed 200 opens the gap too; without a lost answer there is never a warning', async () => {
    const api = await startSellerApi();
    const client = createApiClient(apiConfig(api.url), { logger: silent() });
    const clock = new FakeClock();
    const { logger, lines } = capturingLogger();
    try {
      const quiet = serverApi(client, { clock, logger });
      await quiet.pull([]);
      clock.advance(600_000);
      await quiet.pull([]);
      assert.equal(lines.filter((l) => l.level === 40).length, 0);

      api.inject('pull', 'malformed');
      assert.equal((await quiet.pull([])).kind, 'unusable');
      clock.advance(60_001);
      await quiet.pull([]);
      assert.deepEqual(
        lines.filter((l) => l.event === 'claim.stuck').map((l) => l.level),
        [40],
      );
    } finally {
      await client.close();
      await api.close();
    }
  });
});
