import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createApiClient, parseRetryAfter, type ApiClient } from '../../../src/api/wire/client.js';
import { checkToken } from '../../../src/api/answers/token-check.js';
import { ApiTransportError } from '../../../src/api/errors.js';
import { SIM_SERVER_ID, SIM_TOKEN, startSellerApi, type FakeSellerApi } from '../../../src/sim/faults/seller-api.js';
import { FakeClock, flush } from '../../helpers/fake-clock.js';
import { apiConfig, assertNoSecret, closedPort, silent } from '../helpers.js';

const pullRequest = (client: ApiClient, signal?: AbortSignal) => ({
  method: 'POST' as const,
  path: client.routes.pull(SIM_SERVER_ID),
  json: { onlineIdentifiers: [] },
  context: { route: 'pull' as const, serverId: SIM_SERVER_ID },
  signal,
});

describe('ApiClient over HTTP', () => {
  let api: FakeSellerApi;
  let client: ApiClient;
  before(async () => {
    api = await startSellerApi();
    // apiConfig's generous deadline: the one test about the deadline brings its own client.
    client = createApiClient(apiConfig(api.url), { logger: silent() });
  });
  after(async () => {
    await client.close();
    await api.close();
  });

  test('sends bearer auth and JSON with its content type, returns status, body and rate-limit headers', async () => {
    api.enqueue(SIM_SERVER_ID, { command: 'say hi' });
    const answer = await client.send(pullRequest(client));
    assert.equal(answer.status, 200, 'the fake answers 401 without the bearer token and 415 without application/json');
    assert.match(answer.body, /"command":"say hi"/);
    assert.deepEqual(answer.rateLimit, { remaining: 119, limit: 120, retryAfterMs: undefined });
    const id = (JSON.parse(answer.body) as { id: number }).id;
    const done = await client.send({ method: 'POST', path: client.routes.done(SIM_SERVER_ID, String(id)), context: { route: 'done' } });
    assert.equal(done.status, 200);
  });

  test('a token changed between requests is the one the next request carries, with or without a body', async () => {
    const own = createApiClient(apiConfig(api.url), { logger: silent() });
    try {
      assert.equal((await own.send(pullRequest(own))).status, 204);
      own.useToken('gci_not_the_token');
      assert.equal((await own.send(pullRequest(own))).status, 401);
      const bodiless = await own.send({ method: 'POST', path: own.routes.done(SIM_SERVER_ID, '1'), context: { route: 'done' } });
      assert.equal(bodiless.status, 401);
      own.useToken(SIM_TOKEN);
      assert.equal((await own.send(pullRequest(own))).status, 204);
    } finally {
      await own.close();
    }
  });

  test('every body is read to the end: one keep-alive connection serves answers of every kind', async () => {
    const before = api.connections;
    api.inject('pull', '503');
    api.inject('pull', { body: '{"detail":"' + 'x'.repeat(100_000) + '"}', status: 400 });
    for (let i = 0; i < 10; i++) {
      const answer = await client.send(pullRequest(client));
      assert.ok([204, 400, 503].includes(answer.status));
    }
    await client.send({ method: 'POST', path: client.routes.done(SIM_SERVER_ID, '424242'), context: { route: 'done' } });
    assert.ok(api.connections - before <= 1, `opened ${api.connections - before} connections`);
  });

  test('a timeout becomes ApiTransportError that may have been processed, at the deadline', async () => {
    const short = createApiClient(apiConfig(api.url, { timeoutMs: 300 }), { logger: silent() });
    try {
      // The answer comes far later than any slow machine's deadline: only the deadline can end this.
      api.inject('pull', { delay: 120_000 });
      const started = Date.now();
      const error = await short.send(pullRequest(short)).catch((e: unknown) => e);
      assert.ok(error instanceof ApiTransportError);
      assert.equal(error.failure, 'timeout');
      assert.equal(error.maybeProcessed, true);
      assert.match(error.message, /300 ms/);
      assert.match(error.message, /may have been processed/);
      assert.ok(Date.now() - started < 60_000, 'ended by the 300 ms deadline, not by the answer');
      assertNoSecret(error, SIM_TOKEN);
    } finally {
      await short.close();
    }
  });

  test('a reset becomes ApiTransportError that may have been processed', async () => {
    api.inject('pull', 'reset');
    const error = await client.send(pullRequest(client)).catch((e: unknown) => e);
    assert.ok(error instanceof ApiTransportError, String(error));
    assert.equal(error.failure, 'reset');
    assert.equal(error.maybeProcessed, true);
    assert.ok(error.cause instanceof Error, 'a scrubbed copy of the cause is kept');
    assertNoSecret(error, SIM_TOKEN);
  });

  test('an oversized answer is cut off, not buffered', async () => {
    const small = createApiClient(apiConfig(api.url), { logger: silent(), maxBodyBytes: 1_024 });
    try {
      api.inject('pull', { body: JSON.stringify({ id: 1, command: 'x'.repeat(4_096) }) });
      const error = await small.send(pullRequest(small)).catch((e: unknown) => e);
      assert.ok(error instanceof ApiTransportError);
      assert.equal(error.failure, 'body-too-large');
      assert.equal(error.maybeProcessed, true);
    } finally {
      await small.close();
    }
  });

  test('an oversized pull answer is read through for its id and command size only (any key order), and is no transport error', async () => {
    const small = createApiClient(apiConfig(api.url), { logger: silent(), maxBodyBytes: 1_024 });
    try {
      const command = 'say ' + 'é'.repeat(300_000);
      const body = `{"command":${JSON.stringify(command)},"extra":[{"id":1}],"id":9007199254740993}`;
      api.inject('pull', { body });
      const response = await small.send({ ...pullRequest(small), scanOversized: true });
      assert.equal(response.status, 200);
      assert.equal(response.body, '');
      assert.deepEqual(response.oversized, {
        bytes: Buffer.byteLength(body),
        limitBytes: 1_024,
        object: true,
        id: { kind: 'number', text: '9007199254740993' },
        commandBytes: Buffer.byteLength(command),
        commandIsString: true,
      });
      // A small answer is kept as ever.
      api.inject('pull', { body: '{"id":5,"command":"say hi"}' });
      const kept = await small.send({ ...pullRequest(small), scanOversized: true });
      assert.equal(kept.body, '{"id":5,"command":"say hi"}');
      assert.equal(kept.oversized, undefined);
    } finally {
      await small.close();
    }
  });

  test('the caller aborting rejects with its own reason, not a transport error', async () => {
    api.inject('pull', { delay: 1_000 });
    const controller = new AbortController();
    const pending = client.send(pullRequest(client, controller.signal));
    setImmediate(() => controller.abort(new Error('stopping now')));
    await assert.rejects(pending, /stopping now/);
    const already = new AbortController();
    already.abort(new Error('before'));
    await assert.rejects(client.send(pullRequest(client, already.signal)), /before/);
  });
});

describe('ApiClient: time', () => {
  test('the request deadline runs on the injected clock, not on a raw timer', async () => {
    const api = await startSellerApi();
    const clock = new FakeClock();
    // undici's own timeouts (30 s of real time) stay as a backstop; the fake clock reaches the deadline first.
    const client = createApiClient(apiConfig(api.url, { timeoutMs: 30_000 }), { logger: silent(), clock });
    try {
      api.inject('pull', { delay: 5_000 });
      let settled = false;
      const pending = client.send(pullRequest(client)).then(
        () => assert.fail('the delayed answer must not arrive first'),
        (error: unknown) => {
          settled = true;
          return error;
        },
      );
      clock.advance(29_999);
      await flush();
      assert.equal(settled, false);
      clock.advance(1);
      const error = await pending;
      assert.ok(error instanceof ApiTransportError);
      assert.equal(error.failure, 'timeout');
      assert.match(error.message, /30000 ms/);
    } finally {
      await client.close();
      await api.close();
    }
  });

  test("Retry-After: seconds, or an HTTP date less the answer's Date; a date before it is 0; no Date, negative or garbage is no hint", () => {
    const date = 'Thu, 01 Jan 2026 12:00:00 GMT';
    assert.equal(parseRetryAfter('0', date), 0);
    assert.equal(parseRetryAfter(' 7 ', undefined), 7_000, 'seconds need no Date');
    assert.equal(parseRetryAfter('1.2', date), 1_200);
    assert.equal(parseRetryAfter('3000000', date), 3_000_000_000, 'the budget clamps it, the parser reports it as sent');
    assert.equal(parseRetryAfter('Thu, 01 Jan 2026 12:00:09 GMT', date), 9_000);
    assert.equal(parseRetryAfter('Thu, 01 Jan 1970 00:00:00 GMT', date), 0);
    assert.equal(parseRetryAfter('Thursday, 01-Jan-26 12:00:05 GMT', date), 5_000);
    assert.equal(
      parseRetryAfter('Thu, 01 Jan 2026 12:00:05 GMT', 'Thursday, 01-Jan-26 12:00:03 GMT'),
      2_000,
      'either HTTP-date form in Date',
    );
    // Whatever porter's own clock says: an API 5 minutes ahead asking for Date + 2 s means 2 s.
    const ahead = Date.now() + 300_000;
    assert.equal(parseRetryAfter(new Date(ahead + 2_000).toUTCString(), new Date(ahead).toUTCString()), 2_000);
    for (const noDate of [undefined, '', 'yesterday', '1767268800']) {
      assert.equal(parseRetryAfter('Thu, 01 Jan 2026 12:00:09 GMT', noDate), undefined, `a date beside Date: ${JSON.stringify(noDate)}`);
    }
    for (const garbage of ['-5', '-0.5', '', 'soon', '5s', '1e3', 'NaN', '2026-01-01T12:00:09Z', '0x10']) {
      assert.equal(parseRetryAfter(garbage, date), undefined, JSON.stringify(garbage));
    }
    assert.equal(parseRetryAfter(undefined, date), undefined);
  });
});

describe('ApiClient: connection failures', () => {
  test('connection refused: not sent', async () => {
    const port = await closedPort();
    const client = createApiClient(apiConfig(`http://127.0.0.1:${port}`), { logger: silent() });
    try {
      const error = await client.send(pullRequest(client)).catch((e: unknown) => e);
      assert.ok(error instanceof ApiTransportError, String(error));
      assert.equal(error.failure, 'connect');
      assert.equal(error.maybeProcessed, false);
      assert.match(error.message, /not sent/);
      assert.match(error.message, /api\.baseUrl/);
      assertNoSecret(error, SIM_TOKEN);
    } finally {
      await client.close();
    }
  });

  test('plain http to a non-loopback host is refused before any request', () => {
    assert.throws(() => createApiClient(apiConfig('http://seller.example.com'), { logger: silent() }), /api\.baseUrl/);
  });
});

describe('checkToken (porter check): proves the token without claiming', () => {
  test('200 is valid and lists the servers; nothing is claimed', async () => {
    const api = await startSellerApi();
    const client = createApiClient(apiConfig(api.url), { logger: silent() });
    try {
      api.enqueue(SIM_SERVER_ID, { command: 'must stay queued' });
      const check = await checkToken(client);
      assert.equal(check.kind, 'valid');
      assert.equal(check.ok, true);
      assert.deepEqual(check.kind === 'valid' ? check.servers?.map((s) => s.id) : undefined, [SIM_SERVER_ID]);
      assert.equal(api.claimedCount, 0);
      assert.deepEqual(
        api.requests.map((r) => r.route),
        ['servers'],
      );
    } finally {
      await client.close();
      await api.close();
    }
  });

  test('403 (no servers:read) still proves the token; 401 and 402 do not; failures are returned, not thrown', async () => {
    const api = await startSellerApi({ tokens: { [SIM_TOKEN]: ['commands:execute'] } });
    const client = createApiClient(apiConfig(api.url), { logger: silent() });
    const wrong = createApiClient(apiConfig(api.url, { token: 'gci_not_the_right_one' }), { logger: silent() });
    try {
      const scoped = await checkToken(client);
      assert.equal(scoped.kind, 'valid-scope-unchecked');
      assert.equal(scoped.ok, true);

      const invalid = await checkToken(wrong);
      assert.equal(invalid.kind, 'invalid-token');
      assert.equal(invalid.ok, false);
      if (invalid.kind === 'invalid-token') {
        assert.equal(invalid.error.exitCode, 78);
        assert.match(invalid.error.message, /INVALID_INTEGRATION_TOKEN/);
        assertNoSecret(invalid.error, 'gci_not_the_right_one');
      }

      api.setPlan(false);
      const plan = await checkToken(client);
      assert.equal(plan.kind, 'plan-required');
      assert.equal(plan.ok, false);
    } finally {
      await client.close();
      await wrong.close();
      await api.close();
    }
  });

  test('an unreachable API is an error result', async () => {
    const port = await closedPort();
    const client = createApiClient(apiConfig(`http://127.0.0.1:${port}`), { logger: silent() });
    try {
      const check = await checkToken(client);
      assert.equal(check.kind, 'error');
      assert.ok(check.kind === 'error' && check.error instanceof ApiTransportError);
    } finally {
      await client.close();
    }
  });
});
