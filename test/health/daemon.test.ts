import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { systemClock } from '../../src/clock.js';
import { parseConfig } from '../../src/config/load.js';
import { runDaemon } from '../../src/daemon/daemon.js';
import { startRconServer, type FakeRconServer } from '../../src/sim/rcon-server.js';
import { SIM_SERVER_ID, SIM_TOKEN, startSellerApi, type FakeSellerApi } from '../../src/sim/faults/seller-api.js';
import { waitFor } from '../helpers/wait-for.js';
import { parseMetrics, sample } from './fakes.js';
import { SecretBook } from '../../src/secret-book.js';

/**
 * /healthz and /metrics scraped from a real daemon (runDaemon in this process, which starts the
 * endpoint itself when health.listen is set) delivering from the simulated Seller API to the
 * simulated Minecraft RCON server: during deliveries, during an RCON outage and after it, and
 * under a 429.
 */

const PASSWORD = 'rcon-secret-4242';

/** A logger that prints nothing but keeps its lines, to learn the port health.listen 127.0.0.1:0 got. */
function capturingLogger() {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(...chunk.toString().split('\n').filter(Boolean));
      done();
    },
  });
  return { logger: pino({ level: 'info' }, sink), lines };
}

describe('health endpoint of a running daemon', () => {
  let api: FakeSellerApi;
  let rcon: FakeRconServer;
  let stateDir: string;
  let port = 0;
  const stop = new AbortController();
  let finished: Promise<number>;

  const url = (path: string) => `http://127.0.0.1:${port}${path}`;
  const healthz = async () => {
    const response = await fetch(url('/healthz'), { signal: AbortSignal.timeout(5000) });
    return {
      status: response.status,
      body: (await response.json()) as { status: string; servers: Record<string, { reasons: string[]; backlog: number }> },
    };
  };
  const metrics = async () => parseMetrics(await (await fetch(url('/metrics'), { signal: AbortSignal.timeout(5000) })).text());

  before(async () => {
    api = await startSellerApi();
    rcon = await startRconServer({ password: PASSWORD, flavour: 'minecraft', players: ['Steve'] });
    stateDir = mkdtempSync(join(tmpdir(), 'porter-health-e2e-'));
    const config = await parseConfig(
      {
        api: { baseUrl: api.url, token: SIM_TOKEN },
        servers: [
          {
            id: SIM_SERVER_ID,
            name: 'survival',
            executor: { type: 'rcon', host: rcon.host, port: rcon.port, password: PASSWORD, timeoutMs: 30_000, connectTimeoutMs: 15_000 },
            players: { preset: 'minecraft', refreshMs: 100 },
          },
        ],
        poll: { idleMs: 100 },
        stateDir,
        health: { listen: '127.0.0.1:0' },
        shutdown: { drainMs: 3000 },
      },
      stateDir,
      {},
    );
    const { logger, lines } = capturingLogger();
    finished = runDaemon({ config, logger, clock: systemClock, stopSignal: stop.signal, secrets: new SecretBook([PASSWORD, SIM_TOKEN]) });
    port = await waitFor(
      () => lines.map((l) => JSON.parse(l) as { component?: string; port?: number }).find((l) => l.component === 'health' && l.port)?.port,
      { what: 'the health endpoint to listen' },
    );
  });

  after(async () => {
    stop.abort();
    assert.equal(await finished, 0);
    await api.close();
    await rcon.close();
    rmSync(stateDir, { recursive: true, force: true });
  });

  test('during deliveries: 200, and the delivery, pull and budget metrics move', async () => {
    for (const text of ['say one', 'say two', 'give Steve diamond 1']) api.enqueue(SIM_SERVER_ID, { command: text, player: 'Steve' });
    await waitFor(() => api.commands().every((c) => c.status === 'EXECUTED') && api.commands().length === 3, { what: 'three deliveries' });
    const m = await waitFor(
      async () => {
        const now = await metrics();
        const delivered = sample(now, 'porter_deliveries_total', { server: 'survival', outcome: 'done' }) === 3;
        // After the last delivery the loop pulls again and finds the queue empty.
        const idle = sample(now, 'porter_pulls_total', { server: 'survival', result: 'empty' })! >= 1;
        return delivered && idle ? now : undefined;
      },
      { what: 'three deliveries counted and an empty pull after them' },
    );
    assert.equal(sample(m, 'porter_delivery_duration_seconds_count', { server: 'survival', outcome: 'done' }), 3);
    assert.ok(sample(m, 'porter_last_successful_delivery_timestamp_seconds', { server: 'survival' })! > Date.now() / 1000 - 60);
    assert.equal(sample(m, 'porter_pulls_total', { server: 'survival', result: 'claimed' }), 3);
    assert.ok(sample(m, 'porter_budget_remaining', { server: 'survival', route: 'pull' })! < 120);
    assert.ok(sample(m, 'porter_budget_remaining', { server: 'survival', route: 'done' })! <= 117);
    assert.equal(sample(m, 'porter_executor_connected', { server: 'survival' }), 1);
    assert.equal(sample(m, 'porter_journal_backlog', { server: 'survival' }), 0);
    assert.equal(sample(m, 'porter_server_healthy', { server: 'survival' }), 1);
    const health = await healthz();
    assert.equal(health.status, 200);
    assert.equal(health.body.status, 'ok');
    assert.deepEqual(health.body.servers.survival!.reasons, []);
  });

  test('during an RCON outage: 503 naming the executor, connected 0; back to 200 after it, reconnects counted', async () => {
    await rcon.down();
    const down = await waitFor(
      async () => {
        const h = await healthz();
        return h.status === 503 ? h : undefined;
      },
      { what: '/healthz to notice the outage' },
    );
    assert.equal(down.body.status, 'unhealthy');
    assert.match(down.body.servers.survival!.reasons.join(' '), /executor not connected/);
    assert.doesNotMatch(JSON.stringify(down.body), new RegExp(PASSWORD));
    assert.equal(sample(await metrics(), 'porter_executor_connected', { server: 'survival' }), 0);
    assert.equal(sample(await metrics(), 'porter_server_healthy', { server: 'survival' }), 0);

    await rcon.up();
    await waitFor(async () => (await healthz()).status === 200, { what: '/healthz to recover' });
    const m = await metrics();
    assert.equal(sample(m, 'porter_executor_connected', { server: 'survival' }), 1);
    assert.ok(sample(m, 'porter_executor_reconnects_total', { server: 'survival' })! >= 1);
  });

  test('a 429 is counted and the pull route shows the wait', async () => {
    api.spend(SIM_SERVER_ID, 'pull', api.remaining(SIM_SERVER_ID, 'pull'));
    const m = await waitFor(
      async () => {
        const now = await metrics();
        return sample(now, 'porter_rate_limited_total', { server: 'survival' })! >= 1 ? now : undefined;
      },
      { what: 'a 429 to be counted' },
    );
    assert.ok(sample(m, 'porter_budget_wait_seconds', { server: 'survival', route: 'pull' })! > 0);
    assert.equal(api.retryAfterViolations, 0);
  });
});
