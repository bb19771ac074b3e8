import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseConfig } from '../../src/config/load.js';
import type { Config } from '../../src/config/schema.js';
import { describePlan, effectiveConfig, planReload } from '../../src/daemon/reload-plan.js';
import { OTHER_ID, PASSWORD, SERVER_ID, TOKEN } from '../config/helpers.js';

/** What a reloaded configuration does to a running porter, decided without processes. */

const THIRD_ID = '3d6a4adc-4fc3-43f4-8a5e-2238f5eec649';
const rcon = (port: number, password = PASSWORD) => ({ type: 'rcon', port, password });

async function config(
  edit: (raw: { api: Record<string, unknown>; servers: Array<Record<string, unknown>>; [key: string]: unknown }) => void,
) {
  const raw = {
    api: { baseUrl: 'https://seller.example.com', token: TOKEN } as Record<string, unknown>,
    servers: [
      { id: SERVER_ID, name: 'lobby', executor: rcon(25575) },
      { id: OTHER_ID, name: 'survival', executor: rcon(25576) },
    ] as Array<Record<string, unknown>>,
    stateDir: '/var/lib/porter',
  };
  edit(raw);
  return parseConfig(raw, '/etc/porter', {});
}

const same = () => config(() => {});

describe('planReload', () => {
  test('the same files change nothing', async () => {
    const plan = planReload(await same(), await same());
    assert.deepEqual(
      { ...plan, added: plan.added.length, changed: plan.changed.length },
      {
        deferred: [],
        added: 0,
        removed: [],
        changed: 0,
        newApiClient: false,
        tokenChanged: false,
        newClientStores: [],
        newTokenStores: [],
        storesAdded: [],
        storesRemoved: [],
      },
    );
    assert.equal(describePlan(plan, await same()), 'no change');
  });

  test('a server added, one removed and one changed are told apart by id', async () => {
    const running = await same();
    const next = await config((raw) => {
      raw.servers = [
        { id: SERVER_ID.toUpperCase(), name: 'lobby', executor: rcon(25575, 'a-new-password') },
        { id: THIRD_ID, name: 'creative', executor: rcon(25577) },
      ];
    });
    const plan = planReload(running, next);
    assert.deepEqual(
      plan.added.map((s) => s.name),
      ['creative'],
    );
    assert.deepEqual(plan.removed, [OTHER_ID]);
    assert.deepEqual(
      plan.changed.map((s) => s.name),
      ['lobby'],
      'the id matches whatever its case; the new password makes it a change',
    );
    assert.equal(describePlan(plan, running), 'added creative; removed survival; restarted lobby');
  });

  test('a new token is swapped in place: no loop restarts', async () => {
    const plan = planReload(
      await same(),
      await config((raw) => {
        raw.api.token = 'gci_rotated_0123456789';
      }),
    );
    assert.equal(plan.tokenChanged, true);
    assert.equal(plan.changed.length, 0);
    assert.equal(plan.newApiClient, false);
  });

  test('a new API address or poll pace restarts every loop; only the address needs a new client', async () => {
    const moved = planReload(
      await same(),
      await config((raw) => {
        raw.api.baseUrl = 'https://other.example.com';
      }),
    );
    assert.equal(moved.newApiClient, true);
    assert.equal(moved.changed.length, 2);
    const paced = planReload(
      await same(),
      await config((raw) => {
        raw.poll = { idleMs: 3000 };
      }),
    );
    assert.equal(paced.newApiClient, false);
    assert.equal(paced.changed.length, 2);
  });

  test('budget, health and log wait for a restart and keep their running values', async () => {
    const running = await same();
    const next = await config((raw) => {
      raw.api.budget = { perWindow: 60 };
      raw.health = { listen: '127.0.0.1:9100' };
      raw.log = { level: 'debug' };
    });
    const plan = planReload(running, next);
    assert.equal(plan.deferred.length, 3);
    assert.match(plan.deferred.join('\n'), /api\.budget/);
    const effective: Config = effectiveConfig(running, next);
    assert.deepEqual(effective.api.budget, running.api.budget);
    assert.equal(effective.health, undefined);
    assert.equal(effective.log.level, 'info');
    assert.equal(planReload(effective, effective).deferred.length, 0);
  });

  test('webhook waits for a restart; the webhook secret is taken from the new configuration', async () => {
    const withWebhook = (secret: string, listen: string) =>
      config((raw) => {
        raw.api.webhookSecret = secret;
        raw.webhook = { listen };
      });
    const running = await withWebhook('secret-one', '127.0.0.1:8787');
    const next = await withWebhook('secret-two', '127.0.0.1:9999');
    const plan = planReload(running, next);
    assert.deepEqual(plan.deferred.length, 1);
    assert.match(plan.deferred[0]!, /^webhook /);
    assert.equal(plan.changed.length, 0, 'a webhook change restarts no loop');
    const effective = effectiveConfig(running, next);
    assert.equal(effective.webhook?.listen, '127.0.0.1:8787');
    assert.equal(effective.api.webhookSecret, 'secret-two');
  });

  test("the delivery history's bound waits for a restart too", async () => {
    const running = await same();
    const next = await config((raw) => Object.assign(raw, { history: { maxBytes: 1024 * 1024 } }));
    const plan = planReload(running, next);
    assert.deepEqual(plan.deferred, ['history (the delivery history keeps its bound)']);
    assert.deepEqual(effectiveConfig(running, next).history, running.history);
  });

  test('stores: added and removed by name; a store that moves restarts only its own servers; its token is swapped in place; its budget waits', async () => {
    const withStores = (edit: (stores: Record<string, Record<string, unknown>>) => void) =>
      config((raw) => {
        const stores: Record<string, Record<string, unknown>> = {
          eu: { baseUrl: 'https://seller.example.com', token: 'gci_eu_0123456789' },
          us: { baseUrl: 'https://seller.example.com', token: 'gci_us_0123456789' },
        };
        edit(stores);
        raw.stores = stores;
        raw.servers[1]!.store = 'eu';
      });
    const running = await withStores(() => {});
    const moved = planReload(
      running,
      await withStores((stores) => {
        stores.eu!.baseUrl = 'https://eu.seller.example.com';
        stores.eu!.token = 'gci_eu_rotated_01234';
        delete stores.us;
        stores.asia = { baseUrl: 'https://seller.example.com', token: 'gci_asia_0123456789' };
      }),
    );
    assert.deepEqual(moved.newClientStores, ['eu']);
    assert.deepEqual(moved.newTokenStores, ['eu']);
    assert.equal(moved.newApiClient, false);
    assert.deepEqual(
      moved.changed.map((server) => server.name),
      ['survival'],
      'only the server of the moved store restarts',
    );
    assert.deepEqual(moved.storesAdded, ['asia']);
    assert.deepEqual(moved.storesRemoved, ['us']);
    assert.equal(describePlan(moved, running), 'restarted survival; stores added asia; stores removed us; a new API token for store eu');

    const rotated = planReload(
      running,
      await withStores((stores) => {
        stores.eu!.token = 'gci_eu_rotated_01234';
        stores.us!.budget = { perWindow: 60 };
      }),
    );
    assert.deepEqual(rotated.newTokenStores, ['eu']);
    assert.deepEqual(rotated.newClientStores, []);
    assert.equal(rotated.changed.length, 0, 'a new token restarts nothing');
    assert.match(rotated.deferred.join('\n'), /stores\.us\.budget/);
  });

  test('a server that moves to another store restarts on its client', async () => {
    const stores = { eu: { baseUrl: 'https://seller.example.com', token: 'gci_eu_0123456789' } };
    const running = await config((raw) => (raw.stores = stores));
    const next = await config((raw) => {
      raw.stores = stores;
      raw.servers[0]!.store = 'eu';
    });
    assert.deepEqual(
      planReload(running, next).changed.map((server) => server.name),
      ['lobby'],
    );
  });

  test("a store's budget keeps its running value until a restart", async () => {
    const eu = (budget?: Record<string, number>) => ({ baseUrl: 'https://seller.example.com', token: 'gci_eu_0123456789', budget });
    const running = await config((raw) => (raw.stores = { eu: eu() }));
    const next = await config((raw) => (raw.stores = { eu: eu({ perWindow: 30 }) }));
    assert.deepEqual(effectiveConfig(running, next).stores?.eu?.budget, running.stores?.eu?.budget);
  });

  test('a new stateDir is refused whole: the journal and lock are in the old one', async () => {
    const plan = planReload(
      await same(),
      await config((raw) => {
        raw.stateDir = '/srv/porter-state';
      }),
    );
    assert.match(plan.rejected ?? '', /stateDir changed from \/var\/lib\/porter to \/srv\/porter-state.*restart/);
  });
});
