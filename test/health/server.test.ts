import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { register as globalRegister } from 'prom-client';
import { createMetrics } from '../../src/health/metrics.js';
import { HealthListenError, startHealthServer, type HealthServer } from '../../src/health/server.js';
import { parseListen } from '../../src/health/listen.js';
import type { HealthReport } from '../../src/health/status.js';
import { healthWiring } from '../../src/health/wire.js';
import { fakeDaemon, fakeServer, manualClock, parseMetrics, sample } from './fakes.js';
import { SecretBook } from '../../src/secret-book.js';

const logger = pino({ level: 'silent' });
const SURVIVAL = '1b4e28ba-2fa1-11d2-883f-0016d3cca427';
const CREATIVE = '2c5f39cb-3fb2-22e3-994f-1127e4ddb538';

/** The /healthz body: a HealthReport as JSON. */
const healthz = (text: string) => JSON.parse(text) as HealthReport;

async function get(server: HealthServer, path: string, method = 'GET') {
  const response = await fetch(`http://127.0.0.1:${server.port}${path}`, { method, signal: AbortSignal.timeout(5000) });
  return {
    status: response.status,
    type: response.headers.get('content-type') ?? '',
    text: await response.text(),
    headers: response.headers,
  };
}

describe('health server over a fake daemon', () => {
  const dirs: string[] = [];
  const servers: HealthServer[] = [];
  const clock = manualClock();
  const survival = fakeServer(SURVIVAL, 'survival');
  const creative = fakeServer(CREATIVE);
  let daemon: ReturnType<typeof fakeDaemon>;
  let health: HealthServer;
  const metrics = createMetrics({ clock, servers: [survival.part.server, creative.part.server] });

  before(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'porter-health-'));
    dirs.push(dir);
    daemon = fakeDaemon([survival.part, creative.part], dir);
    health = await startHealthServer({
      listen: '127.0.0.1:0',
      daemon,
      logger,
      clock,
      metrics,
      pollIdleMs: 1000,
      secrets: new SecretBook(['gci_secret_token_value']),
    });
    servers.push(health);
  });
  after(async () => {
    for (const server of servers) await server.close();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  function reset(): void {
    for (const s of [survival, creative]) {
      s.state.connected = true;
      s.state.loop.lastApiError = undefined;
      s.state.loop.lastApiSuccessAt = clock.now();
    }
    daemon.writeError = undefined;
    daemon.journalPath = `${dirs[0]}/journal.json`;
  }

  test('200 with every server ok, keyed by name (id when unnamed)', async () => {
    reset();
    const answer = await get(health, '/healthz');
    assert.equal(answer.status, 200);
    assert.match(answer.type, /^application\/json/);
    const body = healthz(answer.text);
    assert.equal(body.status, 'ok');
    assert.deepEqual(Object.keys(body.servers).sort(), [CREATIVE, 'survival'].sort());
    assert.equal(body.servers.survival?.status, 'ok');
    assert.equal(body.servers.survival?.id, SURVIVAL);
    assert.equal(body.servers.survival?.executorConnected, true);
    assert.deepEqual(body.servers.survival?.reasons, []);
    assert.deepEqual(body.journal, { writable: true, backlog: 0 });
  });

  test('503 naming the server whose executor is disconnected; the other stays ok', async () => {
    reset();
    survival.state.connected = false;
    const answer = await get(health, '/healthz');
    assert.equal(answer.status, 503);
    const body = healthz(answer.text);
    assert.equal(body.status, 'unhealthy');
    assert.equal(body.servers.survival?.status, 'unhealthy');
    assert.match(body.servers.survival?.reasons[0] ?? '', /executor not connected/);
    assert.equal(body.servers[CREATIVE]?.status, 'ok');
  });

  test('API errors turn unhealthy only once the last success is older than max(3 × idle, 60 s)', async () => {
    reset();
    const start = clock.now();
    survival.state.loop.lastApiSuccessAt = start;
    survival.state.loop.lastApiError = 'Seller API unreachable: ECONNREFUSED';
    clock.set(start + 59_000);
    assert.equal((await get(health, '/healthz')).status, 200, 'within the bound a pending error is tolerated');
    clock.set(start + 61_000);
    const answer = await get(health, '/healthz');
    assert.equal(answer.status, 503);
    const reason = healthz(answer.text).servers.survival?.reasons[0] ?? '';
    assert.match(
      reason,
      /Seller API not reachable: no successful call for 61 s \(bound 60 s\); last error: Seller API unreachable: ECONNREFUSED/,
    );
  });

  test('an idle loop with no error pending stays healthy however long ago its last call was', async () => {
    reset();
    survival.state.loop.lastApiSuccessAt = clock.now() - 3_600_000;
    assert.equal((await get(health, '/healthz')).status, 200);
  });

  test('a journal whose last write failed makes every server unhealthy', async () => {
    reset();
    daemon.writeError = Object.assign(new Error('no space left on device'), { code: 'ENOSPC' });
    const answer = await get(health, '/healthz');
    assert.equal(answer.status, 503);
    const body = healthz(answer.text);
    assert.equal(body.journal.writable, false);
    for (const server of Object.values(body.servers)) {
      assert.ok(server.reasons.some((r) => /journal not writable: the last write failed \(ENOSPC\)/.test(r)));
    }
    daemon.writeFailures = 3;
    const m = parseMetrics((await get(health, '/metrics')).text);
    assert.equal(sample(m, 'porter_journal_writable'), 0);
    assert.equal(sample(m, 'porter_journal_write_failures_total'), 3);
  });

  test('a state directory that refuses writes is noticed before any delivery fails', async () => {
    reset();
    daemon.journalPath = join(dirs[0]!, 'gone', 'journal.json');
    const answer = await get(health, '/healthz');
    assert.equal(answer.status, 503);
    assert.match(healthz(answer.text).journal.reason ?? '', /refuses writes \(ENOENT\)/);
  });

  test('secrets are blanked out of error texts', async () => {
    reset();
    survival.state.loop.lastApiSuccessAt = clock.now() - 120_000;
    survival.state.loop.lastApiError = 'odd upstream echo: Bearer gci_secret_token_value';
    const answer = await get(health, '/healthz');
    assert.equal(answer.status, 503);
    assert.doesNotMatch(answer.text, /gci_secret_token_value/);
    assert.match(answer.text, /Bearer \[Redacted\]/);
  });

  test('/metrics serves every issue-4 metric from the daemon and the observer', async () => {
    reset();
    survival.state.api.pulls = { claimed: 3, empty: 10, busy204: 1, unusable: 0, error: 2 };
    survival.state.api.reports = { accepted: 3, alreadySettled: 1, refused: 2, error: 0 };
    survival.state.api.rateLimited = 4;
    survival.state.api.budget = { ...survival.state.api.budget, pull: { ...survival.state.api.budget.pull, remaining: 17, delayMs: 2500 } };
    survival.state.reconnects = 2;
    creative.state.connected = false;
    daemon.pendingIds = [{ serverId: SURVIVAL, id: '9007199254740993' }];
    metrics.observer.onDelivery?.({ serverId: SURVIVAL, id: '1', result: 'done', ms: 40 });
    metrics.observer.onDelivery?.({ serverId: SURVIVAL, id: '2', result: 'done', ms: 700 });
    metrics.observer.onDelivery?.({ serverId: SURVIVAL, id: '3', result: 'failed', ms: 20 });

    const answer = await get(health, '/metrics');
    assert.equal(answer.status, 200);
    assert.match(answer.type, /^text\/plain; version=0\.0\.4/);
    const m = parseMetrics(answer.text);
    assert.equal(sample(m, 'porter_deliveries_total', { server: 'survival', outcome: 'done' }), 2);
    assert.equal(sample(m, 'porter_deliveries_total', { server: 'survival', outcome: 'failed' }), 1);
    assert.equal(sample(m, 'porter_delivery_duration_seconds_count', { server: 'survival', outcome: 'done' }), 2);
    assert.equal(sample(m, 'porter_delivery_duration_seconds_bucket', { server: 'survival', outcome: 'done', le: '0.05' }), 1);
    assert.equal(sample(m, 'porter_delivery_duration_seconds_bucket', { server: 'survival', outcome: 'done', le: '1' }), 2);
    assert.equal(sample(m, 'porter_last_successful_delivery_timestamp_seconds', { server: 'survival' }), clock.now() / 1000);
    for (const [result, value] of Object.entries({ claimed: 3, empty: 10, busy: 1, unusable: 0, error: 2 })) {
      assert.equal(sample(m, 'porter_pulls_total', { server: 'survival', result }), value, result);
    }
    assert.equal(sample(m, 'porter_reports_total', { server: 'survival', result: 'already_settled' }), 1);
    assert.equal(sample(m, 'porter_reports_total', { server: 'survival', result: 'refused' }), 2);
    assert.equal(sample(m, 'porter_rate_limited_total', { server: 'survival' }), 4);
    assert.equal(sample(m, 'porter_budget_remaining', { server: 'survival', route: 'pull' }), 17);
    assert.equal(sample(m, 'porter_budget_remaining', { server: 'survival', route: 'done' }), 120);
    assert.equal(sample(m, 'porter_budget_wait_seconds', { server: 'survival', route: 'pull' }), 2.5);
    assert.equal(sample(m, 'porter_executor_connected', { server: 'survival' }), 1);
    assert.equal(sample(m, 'porter_executor_connected', { server: CREATIVE }), 0);
    assert.equal(sample(m, 'porter_executor_reconnects_total', { server: 'survival' }), 2);
    assert.equal(sample(m, 'porter_journal_backlog', { server: 'survival' }), 1);
    assert.equal(sample(m, 'porter_journal_backlog', { server: CREATIVE }), 0);
    assert.equal(sample(m, 'porter_server_healthy', { server: 'survival' }), 1);
    assert.equal(sample(m, 'porter_server_healthy', { server: CREATIVE }), 0);
    assert.equal(sample(m, 'porter_last_api_success_timestamp_seconds', { server: 'survival' }), clock.now() / 1000);
    assert.ok(sample(m, 'process_resident_memory_bytes') !== undefined || sample(m, 'nodejs_heap_size_used_bytes') !== undefined);
  });

  test("porter's metrics live in a private registry, not prom-client's global one", async () => {
    assert.equal((await globalRegister.metrics()).includes('porter_'), false);
    const other = createMetrics({ clock, processMetrics: false });
    other.observer.onDelivery?.({ serverId: SURVIVAL, id: '9', result: 'done', ms: 1 });
    const before = parseMetrics(await metrics.registry.metrics());
    const count = sample(before, 'porter_deliveries_total', { server: 'survival', outcome: 'done' });
    assert.equal(count, 2, 'a second registry does not add to the first');
  });

  test('HEAD answers without a body, other methods 405, unknown paths 404', async () => {
    const head = await get(health, '/healthz', 'HEAD');
    assert.ok(head.status === 200 || head.status === 503);
    assert.equal(head.text, '');
    const post = await get(health, '/metrics', 'POST');
    assert.equal(post.status, 405);
    assert.equal(post.headers.get('allow'), 'GET, HEAD');
    const missing = await get(health, '/');
    assert.equal(missing.status, 404);
    assert.match((JSON.parse(missing.text) as { error: string }).error, /use \/healthz, \/metrics or \/history/);
  });
});

describe('health server lifecycle', () => {
  test('a port in use is a HealthListenError that names the address and what to do', async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as { port: number }).port;
    const dir = mkdtempSync(join(tmpdir(), 'porter-health-'));
    try {
      await assert.rejects(
        startHealthServer({ listen: `127.0.0.1:${port}`, daemon: fakeDaemon([], dir), logger, clock: manualClock() }),
        (error: unknown) => {
          assert.ok(error instanceof HealthListenError);
          assert.match(error.message, new RegExp(`health.listen 127.0.0.1:${port}: cannot listen \\(EADDRINUSE\\); choose a free port`));
          return true;
        },
      );
    } finally {
      await new Promise((resolve) => blocker.close(resolve));
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('close() ends kept-alive connections instead of waiting for them', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'porter-health-'));
    const health = await startHealthServer({ listen: '127.0.0.1:0', daemon: fakeDaemon([], dir), logger, clock: manualClock() });
    try {
      const answer = await fetch(`http://127.0.0.1:${health.port}/healthz`, { signal: AbortSignal.timeout(5000) });
      await answer.text();
      const started = performance.now();
      await health.close();
      // Just under the 5 s keep-alive timeout a wrong close would wait out: slack for a loaded machine.
      assert.ok(performance.now() - started < 4_500, 'close waited for the keep-alive timeout');
      await assert.rejects(fetch(`http://127.0.0.1:${health.port}/healthz`, { signal: AbortSignal.timeout(5000) }));
    } finally {
      await health.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('listen addresses: host:port and [v6]:port parse; anything else is a config error', () => {
    assert.deepEqual(parseListen('127.0.0.1:9464'), { host: '127.0.0.1', port: 9464 });
    assert.deepEqual(parseListen('[::1]:0'), { host: '::1', port: 0 });
    assert.deepEqual(parseListen('localhost:80'), { host: 'localhost', port: 80 });
    for (const bad of ['9464', ':9464', '127.0.0.1:99999', '::1:9464', 'host:port']) {
      assert.throws(() => parseListen(bad), /health.listen: expected host:port/, bad);
    }
  });

  test('healthWiring opens nothing without a health section', () => {
    const config = { servers: [], poll: { idleMs: 1000 } };
    assert.equal(healthWiring(config, { logger, clock: manualClock() }), undefined);
  });
});
