import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createMetrics } from '../../src/health/metrics.js';
import type { HealthSource, StoreStatus } from '../../src/health/source.js';
import { evaluateHealth } from '../../src/health/status.js';
import { fakeDaemon, fakeServer, manualClock, parseMetrics, sample } from './fakes.js';

/** /healthz and the metric when a store's token was refused (docs/operations.md#get-healthz). */

describe('stores in /healthz and /metrics', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'porter-health-stores-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  const clock = manualClock();
  const policy = { startedAt: clock.now(), apiStaleMs: 60_000 };
  const refusedEu: StoreStatus[] = [
    { name: 'default', servers: ['survival'] },
    { name: 'eu-network', servers: ['eu-1', 'eu-2'], refused: { status: 403, code: 'INTEGRATION_SCOPE_MISSING', since: clock.now() } },
  ];

  function source(stores: readonly StoreStatus[] | undefined) {
    const survival = fakeServer('1b4e28ba-2fa1-11d2-883f-0016d3cca427', 'survival');
    const daemon: HealthSource = { ...fakeDaemon([survival.part], dir), ...(stores && { stores }) };
    return { daemon, survival };
  }

  test('a refused store: degraded (not unhealthy), the store named with its servers, the reason with status and code', () => {
    const { daemon } = source(refusedEu);
    const report = evaluateHealth(daemon, clock.now(), policy);
    assert.equal(report.status, 'degraded');
    assert.deepEqual(report.stores?.default, { status: 'ok', servers: ['survival'] });
    assert.equal(report.stores?.['eu-network']?.status, 'token-refused');
    assert.deepEqual(report.stores?.['eu-network']?.servers, ['eu-1', 'eu-2']);
    assert.match(report.stores?.['eu-network']?.reason ?? '', /\(403 INTEGRATION_SCOPE_MISSING\): its servers are stopped/);
    assert.equal(report.stores?.['eu-network']?.since, new Date(clock.now()).toISOString());
  });

  test('a running server that is unhealthy still makes it unhealthy; no store refused is ok; no stores at all is as before', () => {
    const { daemon, survival } = source(refusedEu);
    survival.state.connected = false;
    assert.equal(evaluateHealth(daemon, clock.now(), policy).status, 'unhealthy');
    assert.equal(evaluateHealth(source([{ name: 'default', servers: ['survival'] }]).daemon, clock.now(), policy).status, 'ok');
    const plain = evaluateHealth(source(undefined).daemon, clock.now(), policy);
    assert.equal(plain.status, 'ok');
    assert.equal(plain.stores, undefined);
  });

  test('porter_store_token_refused is 1 for the refused store, 0 for the others', async () => {
    const metrics = createMetrics({ clock, processMetrics: false });
    metrics.attach(source(refusedEu).daemon, policy);
    const samples = parseMetrics(await metrics.registry.metrics());
    assert.equal(sample(samples, 'porter_store_token_refused', { store: 'eu-network' }), 1);
    assert.equal(sample(samples, 'porter_store_token_refused', { store: 'default' }), 0);
  });
});
