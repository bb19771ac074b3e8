import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { HealthSource } from '../../src/health/source.js';
import { evaluateHealth } from '../../src/health/status.js';
import { fakeDaemon, fakeServer, manualClock } from './fakes.js';

/**
 * /healthz shows where porter is in its lifecycle (docs/design.md#lifecycle): the daemon's state
 * and each server runner's, and the claims no configured store can report, which make porter
 * degraded, not unhealthy (docs/operations.md#get-healthz).
 */

describe('the lifecycle in /healthz', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'porter-health-lifecycle-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  const clock = manualClock();
  const policy = { startedAt: clock.now(), apiStaleMs: 60_000 };

  test("the daemon's state and each server's: a stop shows as draining", () => {
    const survival = fakeServer('1b4e28ba-2fa1-11d2-883f-0016d3cca427', 'survival');
    const daemon: HealthSource = { ...fakeDaemon([{ ...survival.part, state: 'draining' }], dir), state: () => 'draining' };
    const report = evaluateHealth(daemon, clock.now(), policy);
    assert.equal(report.state, 'draining');
    assert.equal(report.servers.survival?.state, 'draining');
  });

  test('claims no configured store can report: degraded with HTTP-200 semantics, each named with what to do', () => {
    const survival = fakeServer('1b4e28ba-2fa1-11d2-883f-0016d3cca427', 'survival');
    const stuck = [{ serverId: '2c5f39cb-3fb2-42e3-994f-1127e4ddb538', id: '48213', store: 'eu-network' }];
    const report = evaluateHealth({ ...fakeDaemon([survival.part], dir), unreportable: () => stuck }, clock.now(), policy);
    assert.equal(report.status, 'degraded');
    assert.deepEqual(report.journal.unreportable?.commands, ['2c5f39cb-3fb2-42e3-994f-1127e4ddb538/48213']);
    assert.deepEqual(report.journal.unreportable?.stores, ['eu-network']);
    assert.match(report.journal.unreportable?.reason ?? '', /add the store back to report them, or settle them in the store dashboard/);
    assert.equal(evaluateHealth({ ...fakeDaemon([survival.part], dir), unreportable: () => [] }, clock.now(), policy).status, 'ok');
  });
});
