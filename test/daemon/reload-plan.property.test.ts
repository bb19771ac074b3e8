import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { parseConfig } from '../../src/config/load.js';
import { effectiveConfig, planReload } from '../../src/daemon/reload-plan.js';
import { fcOptions } from '../helpers/fc-options.js';

/**
 * Any two configurations, in any order of reloads: every configured server is either added,
 * changed or left running exactly as it was; every server no longer configured is removed; and a
 * reload of what already runs changes nothing. So no reload leaves a server running twice, or
 * stopped while configured.
 */

const IDS = [
  '1b4e28ba-2fa1-11d2-883f-0016d3cca427',
  '2c5f39cb-3fb2-42e3-994f-1127e4ddb538',
  '3d6a4adc-4fc3-43f4-8a5e-2238f5eec649',
  '4e7b5bed-5ad4-44a5-9b6f-3349a6ffd75a',
];

const server = fc.record({
  id: fc.constantFrom(...IDS).chain((id) => fc.constantFrom(id, id.toUpperCase())),
  port: fc.constantFrom(25575, 25576),
  password: fc.constantFrom('first-password', 'second-password'),
  refreshMs: fc.constantFrom(1000, 2000),
});

const config = fc.record({
  servers: fc.uniqueArray(server, { minLength: 1, maxLength: 4, selector: (s) => s.id.toLowerCase() }),
  token: fc.constantFrom('gci_token_one_111111', 'gci_token_two_222222'),
  baseUrl: fc.constantFrom('https://seller.example.com', 'https://other.example.com'),
  idleMs: fc.constantFrom(1000, 1500),
  perWindow: fc.constantFrom(120, 60),
});

type Generated = typeof config extends fc.Arbitrary<infer T> ? T : never;

function load(generated: Generated) {
  return parseConfig(
    {
      api: { baseUrl: generated.baseUrl, token: generated.token, budget: { perWindow: generated.perWindow } },
      servers: generated.servers.map((s) => ({
        id: s.id,
        executor: { type: 'rcon', port: s.port, password: s.password },
        players: { refreshMs: s.refreshMs },
      })),
      poll: { idleMs: generated.idleMs },
      stateDir: '/var/lib/porter',
    },
    '/etc/porter',
    {},
  );
}

test('any sequence of reloads: each configured server added, changed or kept; each other one removed; a repeat changes nothing', async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(config, { minLength: 2, maxLength: 5 }), async (sequence) => {
      let running = await load(sequence[0]!);
      for (const generated of sequence.slice(1)) {
        const next = await load(generated);
        const plan = planReload(running, next);
        assert.equal(plan.rejected, undefined);
        const key = (id: string) => id.toLowerCase();
        const before = new Set(running.servers.map((s) => key(s.id)));
        const after = new Set(next.servers.map((s) => key(s.id)));
        const added = plan.added.map((s) => key(s.id));
        const changed = plan.changed.map((s) => key(s.id));
        assert.deepEqual(new Set(plan.removed.map(key)), new Set([...before].filter((id) => !after.has(id))));
        assert.deepEqual(new Set(added), new Set([...after].filter((id) => !before.has(id))));
        assert.ok(
          changed.every((id) => before.has(id) && after.has(id)),
          'only a server in both can change',
        );
        assert.equal(new Set([...added, ...changed]).size, added.length + changed.length, 'no server started twice');
        if (plan.newApiClient || running.poll.idleMs !== next.poll.idleMs) {
          assert.equal(changed.length + added.length, after.size, 'a new API client or pace restarts every loop');
        }
        running = effectiveConfig(running, next);
        const again = planReload(running, running);
        assert.deepEqual([again.added.length, again.changed.length, again.removed.length, again.deferred.length], [0, 0, 0, 0]);
        assert.equal(running.api.budget.perWindow, (await load(sequence[0]!)).api.budget.perWindow, 'the budget waits for a restart');
      }
    }),
    fcOptions({ numRuns: 150 }),
  );
});
