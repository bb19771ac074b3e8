import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createMetrics } from '../../src/health/metrics.js';
import type { HealthServerPart, HealthSource, StoreStatus } from '../../src/health/source.js';
import { fakeDaemon, fakeServer, manualClock, parseMetrics } from './fakes.js';

/**
 * A server a reload removed leaves /metrics: a host that replaces servers all
 * day must not keep one set of delivery series per server it ever ran. A configured server whose
 * loop stopped (its store's token refused) keeps them.
 */

let dir: string;
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'porter-health-removed-'));
});
after(() => rmSync(dir, { recursive: true, force: true }));

test("a removed server's delivery series are dropped at the next scrape; a configured one that stopped keeps them; one added back starts from 0", async () => {
  const clock = manualClock();
  const metrics = createMetrics({ clock, processMetrics: false });
  const a = fakeServer('0b6a3f2e-0000-4000-8000-00000000000a', 'alpha');
  const b = fakeServer('0b6a3f2e-0000-4000-8000-00000000000b', 'beta');
  const c = fakeServer('0b6a3f2e-0000-4000-8000-00000000000c', 'gamma');
  let running: HealthServerPart[] = [a.part, b.part, c.part];
  let stores: StoreStatus[] = [{ name: 'default', servers: ['alpha', 'beta', 'gamma'] }];
  const source: HealthSource = {
    journal: fakeDaemon([], dir).journal,
    get servers() {
      return running;
    },
    get stores() {
      return stores;
    },
  };
  metrics.attach(source, { startedAt: clock.now(), apiStaleMs: 60_000 });
  for (const part of [a.part, b.part, c.part]) metrics.observer.onDelivery?.({ serverId: part.server.id, id: '1', result: 'done', ms: 20 });
  const servers = async (name: string) =>
    new Set(
      parseMetrics(await metrics.registry.metrics())
        .filter((s) => s.name === name)
        .map((s) => s.labels.server),
    );
  const all = ['porter_deliveries_total', 'porter_delivery_duration_seconds_count', 'porter_last_successful_delivery_timestamp_seconds'];
  for (const name of all) assert.deepEqual(await servers(name), new Set(['alpha', 'beta', 'gamma']), name);

  // A reload removes beta; gamma stays configured but its loop stopped (not among the running parts).
  stores = [{ name: 'default', servers: ['alpha', 'gamma'] }];
  running = [a.part];
  for (const name of all) assert.deepEqual(await servers(name), new Set(['alpha', 'gamma']), name);

  // beta added back: counted from 0.
  stores = [{ name: 'default', servers: ['alpha', 'beta', 'gamma'] }];
  running = [a.part, b.part];
  metrics.observer.onDelivery?.({ serverId: b.part.server.id, id: '2', result: 'failed', ms: 20 });
  const samples = parseMetrics(await metrics.registry.metrics()).filter(
    (s) => s.name === 'porter_deliveries_total' && s.labels.server === 'beta',
  );
  assert.deepEqual(
    samples.map((s) => [s.labels.outcome, s.value]),
    [['failed', 1]],
  );
});
