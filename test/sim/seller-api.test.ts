import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { SIM_SERVER_ID, SIM_TOKEN, startSellerApi, type FakeSellerApi } from '../../src/sim/faults/seller-api.js';
import { FakeClock } from '../helpers/fake-clock.js';
import { waitFor } from '../helpers/wait-for.js';

/**
 * The fake is checked with node:http, a client independent of porter's, so that porter's own
 * tests against the fake prove something about porter and not about a shared misunderstanding.
 */
interface Raw {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

function call(
  api: FakeSellerApi,
  method: string,
  path: string,
  options: { token?: string | null; json?: unknown; contentType?: string | null } = {},
): Promise<Raw> {
  const body = options.json === undefined ? undefined : JSON.stringify(options.json);
  const headers: Record<string, string> = {};
  const token = options.token === undefined ? SIM_TOKEN : options.token;
  if (token !== null) headers.authorization = `Bearer ${token}`;
  if (body !== undefined && options.contentType !== null) headers['content-type'] = options.contentType ?? 'application/json';
  if (body !== undefined) headers['content-length'] = String(Buffer.byteLength(body));
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${api.url}${path}`, { method, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

const pullPath = (serverId = SIM_SERVER_ID) => `/v1/seller/servers/${serverId}/commands/pull`;
const reportPath = (id: string, route: 'done' | 'fail', serverId = SIM_SERVER_ID) =>
  `/v1/seller/servers/${serverId}/commands/${id}/${route}`;
const pull = (api: FakeSellerApi, online: string[] = [], serverId?: string) =>
  call(api, 'POST', pullPath(serverId), { json: { onlineIdentifiers: online } });

describe('fake Seller API: authentication and errors', () => {
  let api: FakeSellerApi;
  before(async () => {
    api = await startSellerApi({ tokens: { [SIM_TOKEN]: ['commands:execute'], gci_reader: ['servers:read'] } });
  });
  after(() => api.close());

  test('401 INVALID_INTEGRATION_TOKEN as problem+json for a missing or wrong token, without rate headers', async () => {
    for (const token of [null, 'gci_wrong']) {
      const answer = await call(api, 'POST', pullPath(), { token, json: { onlineIdentifiers: [] } });
      assert.equal(answer.status, 401);
      assert.match(String(answer.headers['content-type']), /application\/problem\+json/);
      const problem = JSON.parse(answer.body) as { status: number; code: string };
      assert.equal(problem.status, 401);
      assert.equal(problem.code, 'INVALID_INTEGRATION_TOKEN');
      assert.equal(answer.headers['x-ratelimit-remaining'], undefined);
    }
  });

  test('403 INTEGRATION_SCOPE_MISSING with requiredScope', async () => {
    const answer = await call(api, 'POST', pullPath(), { token: 'gci_reader', json: { onlineIdentifiers: [] } });
    assert.equal(answer.status, 403);
    const problem = JSON.parse(answer.body) as { code: string; requiredScope: string[] };
    assert.equal(problem.code, 'INTEGRATION_SCOPE_MISSING');
    assert.deepEqual(problem.requiredScope, ['commands:execute']);
    const list = await call(api, 'GET', '/v1/seller/servers');
    assert.equal(list.status, 403);
    assert.deepEqual((JSON.parse(list.body) as { requiredScope: string[] }).requiredScope, ['servers:read']);
  });

  test('402 PLAN_FEATURE_REQUIRED while the plan is off; setToken revokes and grants', async () => {
    api.setPlan(false);
    const off = await pull(api);
    assert.equal(off.status, 402);
    assert.equal((JSON.parse(off.body) as { code: string }).code, 'PLAN_FEATURE_REQUIRED');
    api.setPlan(true);
    assert.equal((await pull(api)).status, 204);
    api.setToken(SIM_TOKEN, null);
    assert.equal((await pull(api)).status, 401);
    api.setToken(SIM_TOKEN, ['commands:execute', 'servers:read']);
    const list = await call(api, 'GET', '/v1/seller/servers');
    assert.equal(list.status, 200);
    assert.deepEqual(
      (JSON.parse(list.body) as Array<{ id: string }>).map((s) => s.id),
      [SIM_SERVER_ID],
    );
  });

  test('404 with a typed code for an unknown server; 404/405 for unknown routes and methods', async () => {
    const answer = await pull(api, [], '00000000-0000-0000-0000-000000000000');
    assert.equal(answer.status, 404);
    assert.equal((JSON.parse(answer.body) as { code: string }).code, 'SERVER_NOT_FOUND');
    assert.equal((await call(api, 'GET', '/v1/nothing')).status, 404);
    assert.equal((await call(api, 'GET', pullPath())).status, 405);
  });

  test('pull and fail need a JSON body', async () => {
    assert.equal((await call(api, 'POST', pullPath(), { json: { onlineIdentifiers: [] }, contentType: null })).status, 415);
    assert.equal((await call(api, 'POST', pullPath(), { json: { onlineIdentifiers: 'x' } })).status, 400);
    const many = Array.from({ length: 4097 }, (_, i) => `p${i}`);
    assert.equal((await pull(api, many)).status, 400);
  });
});

describe('fake Seller API: the queue', () => {
  test('claims one due command, 204 while it is PROCESSING, then done/fail/404/409; ids keep their digits', async () => {
    const api = await startSellerApi({ idStart: 9007199254740993n });
    try {
      assert.equal((await pull(api)).status, 204);
      const first = api.enqueue(SIM_SERVER_ID, { command: 'say one' });
      const second = api.enqueue(SIM_SERVER_ID, { command: 'say two' });
      assert.equal(first, '9007199254740993');
      const claimed = await pull(api);
      assert.equal(claimed.status, 200);
      assert.equal(claimed.body, '{"id":9007199254740993,"command":"say one"}');
      const busy = await pull(api);
      assert.equal(busy.status, 204);
      assert.equal(busy.body, '');
      assert.equal((await call(api, 'POST', reportPath(first, 'done'))).status, 200);
      assert.equal((await call(api, 'POST', reportPath(first, 'done'))).status, 409);
      assert.equal((await call(api, 'POST', reportPath('9007199254740992', 'done'))).status, 404);
      assert.equal((JSON.parse((await pull(api)).body) as { command: string }).command, 'say two');
      const tooLong = 'x'.repeat(1001);
      assert.equal((await call(api, 'POST', reportPath(second, 'fail'), { json: { error: tooLong } })).status, 400);
      assert.equal((await call(api, 'POST', reportPath(second, 'fail'), { json: { error: '😀'.repeat(1000) } })).status, 200);
      const commands = api.commands();
      assert.deepEqual(
        commands.map((c) => [c.id, c.status, c.claims, c.doneCalls, c.failCalls]),
        [
          [first, 'EXECUTED', 1, 2, 0],
          [second, 'FAILED', 1, 0, 1],
        ],
      );
      assert.equal(commands[1]!.error, '😀'.repeat(1000));
      assert.deepEqual(
        commands[0]!.reports.map((r) => r.status),
        [200, 409],
      );
      assert.equal(api.claimedCount, 2);
    } finally {
      await api.close();
    }
  });

  test('online-only commands wait for their player (trimmed, lowercased); due times are honoured', async () => {
    const clock = new FakeClock();
    const api = await startSellerApi({ clock, idAsString: true });
    try {
      const later = api.enqueue(SIM_SERVER_ID, { command: 'later', executeAt: clock.now() + 5_000 });
      const online = api.enqueue(SIM_SERVER_ID, { command: 'give Steve', player: 'Steve', offlineExecute: false });
      assert.equal((await pull(api, ['alex'])).status, 204);
      const claimed = await pull(api, ['  STEVE ']);
      assert.equal(claimed.body, `{"id":"${online}","command":"give Steve"}`);
      await call(api, 'POST', reportPath(online, 'done'));
      assert.equal((await pull(api)).status, 204, 'not due yet');
      clock.advance(5_000);
      assert.equal((JSON.parse((await pull(api)).body) as { id: string }).id, later);
    } finally {
      await api.close();
    }
  });

  test('a PROCESSING command nobody reports becomes UNCERTAIN after processingTimeoutMs', async () => {
    const clock = new FakeClock();
    const api = await startSellerApi({ clock, processingTimeoutMs: 60_000 });
    try {
      const id = api.enqueue(SIM_SERVER_ID, { command: 'x' });
      api.enqueue(SIM_SERVER_ID, { command: 'y' });
      await pull(api);
      clock.advance(59_999);
      assert.equal((await pull(api)).status, 204);
      clock.advance(1);
      assert.equal(api.commands()[0]!.status, 'UNCERTAIN');
      assert.equal((await pull(api)).status, 200, 'the server is no longer blocked');
      assert.equal((await call(api, 'POST', reportPath(id, 'done'))).status, 409);
    } finally {
      await api.close();
    }
  });
});

describe('fake Seller API: budget', () => {
  test('fixed windows per server and route with headers; 429 with Retry-After rounded up; early requests counted', async () => {
    const clock = new FakeClock();
    const api = await startSellerApi({ clock, budget: { perWindow: 3, windowMs: 10_000 } });
    try {
      const remaining: string[] = [];
      for (let i = 0; i < 3; i++) {
        const answer = await pull(api);
        assert.equal(answer.headers['x-ratelimit-limit'], '3');
        remaining.push(String(answer.headers['x-ratelimit-remaining']));
      }
      assert.deepEqual(remaining, ['2', '1', '0']);
      clock.advance(2_500);
      const limited = await pull(api);
      assert.equal(limited.status, 429);
      assert.equal(limited.headers['retry-after'], '8', 'ceil(7.5 s)');
      const problem = JSON.parse(limited.body) as { code: string; retryAfterSeconds: number };
      assert.equal(problem.code, 'RATE_LIMIT_ERROR');
      assert.equal(problem.retryAfterSeconds, 8);
      assert.equal(api.retryAfterViolations, 0);
      assert.equal((await call(api, 'POST', reportPath('1', 'done'))).status, 404, 'other routes keep their own budget');
      clock.advance(7_999);
      assert.equal((await pull(api)).status, 204, 'the window ended, but Retry-After had not');
      assert.equal(api.retryAfterViolations, 1);
      assert.equal(api.requests.at(-1)!.retryAfterViolation, true);
      clock.advance(1);
      await pull(api);
      assert.equal(api.retryAfterViolations, 1);
    } finally {
      await api.close();
    }
  });

  test('spend() uses the window like another connector would', async () => {
    const api = await startSellerApi({ budget: { perWindow: 5, windowMs: 60_000 } });
    try {
      api.spend(SIM_SERVER_ID, 'pull', 4);
      assert.equal(api.remaining(SIM_SERVER_ID, 'pull'), 1);
      assert.equal((await pull(api)).headers['x-ratelimit-remaining'], '0');
      assert.equal((await pull(api)).status, 429);
      assert.equal(api.remaining(SIM_SERVER_ID, 'done'), 5);
    } finally {
      await api.close();
    }
  });
});

describe('fake Seller API: faults', () => {
  test('500, 503, malformed, raw body and reset on the next requests of a route', async () => {
    const api = await startSellerApi();
    try {
      api.enqueue(SIM_SERVER_ID, { command: 'kept' });
      api.inject('pull', '500');
      api.inject('pull', '503');
      api.inject('pull', 'malformed');
      api.inject('pull', { body: 'null' });
      api.inject('pull', 'reset');
      assert.equal((await pull(api)).status, 500);
      assert.equal((await pull(api)).status, 503);
      const malformed = await pull(api);
      assert.equal(malformed.status, 200);
      assert.throws(() => JSON.parse(malformed.body));
      assert.equal((await pull(api)).body, 'null');
      await assert.rejects(pull(api), /socket hang up|ECONNRESET/);
      assert.equal(api.claimedCount, 0, 'faults before handling claim nothing');
      assert.equal((JSON.parse((await pull(api)).body) as { command: string }).command, 'kept');
      assert.deepEqual(
        api.requests.map((r) => [r.status, r.fault]),
        [
          [500, '500'],
          [503, '503'],
          [200, 'malformed'],
          [200, 'body (200)'],
          [0, 'reset'],
          [200, undefined],
        ],
      );
    } finally {
      await api.close();
    }
  });

  test('claim-then-reset claims the command and loses the answer; delay answers late', async () => {
    const api = await startSellerApi();
    try {
      api.enqueue(SIM_SERVER_ID, { command: 'lost' });
      api.inject('pull', 'claim-then-reset');
      await assert.rejects(pull(api));
      assert.equal(api.claimedCount, 1);
      assert.equal(api.commands()[0]!.status, 'PROCESSING');
      assert.equal((await pull(api)).status, 204);
      api.inject('pull', { delay: 150 }, { serverId: SIM_SERVER_ID });
      const started = Date.now();
      assert.equal((await pull(api)).status, 204);
      assert.ok(Date.now() - started >= 140);
    } finally {
      await api.close();
    }
  });

  test('close() ends keep-alive connections and pending delays', async () => {
    const api = await startSellerApi();
    api.inject('pull', { delay: 60_000 });
    const pending = pull(api).catch((error: unknown) => error);
    await waitFor(() => api.inFlight === 1, { what: 'the delayed pull to arrive' });
    const started = Date.now();
    await api.close();
    assert.ok(Date.now() - started < 5_000);
    assert.ok((await pending) instanceof Error);
  });
});
