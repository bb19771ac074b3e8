import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { checkToken } from '../../src/api/answers/token-check.js';
import { systemClock } from '../../src/clock.js';
import { parseConfig } from '../../src/config/load.js';
import type { Config } from '../../src/config/schema.js';
import { Fleet } from '../../src/daemon/fleet.js';
import { StoreClients } from '../../src/daemon/stores.js';
import { Journal } from '../../src/delivery/journal/journal.js';
import { startRconServer, type FakeRconServer } from '../../src/sim/rcon-server.js';
import { SIM_SERVER_ID, SIM_TOKEN, startSellerApi, type FakeSellerApi } from '../../src/sim/seller-api.js';
import { waitFor } from '../helpers/wait-for.js';
import { SecretBook } from '../../src/secret-book.js';

/** Many stores in one process (docs/design.md#many-stores): one pool per API origin, wake-ups per store. */

const EU_SERVER_ID = '2c5f39cb-3fb2-42e3-994f-1127e4ddb538';
const EU_TOKEN = 'gci_eu_network_5a4b3c2d1e';
const PASSWORD = 'rcon-secret-4242';
const SCOPES = ['commands:execute', 'servers:read'];
const silent = pino({ level: 'silent' });

describe('many stores in one process', () => {
  let api: FakeSellerApi;
  let rcon: FakeRconServer;
  let stateDir: string;
  let config: Config;

  before(async () => {
    api = await startSellerApi({ tokens: { [SIM_TOKEN]: SCOPES, [EU_TOKEN]: SCOPES }, servers: [SIM_SERVER_ID, EU_SERVER_ID] });
    rcon = await startRconServer({ password: PASSWORD, flavour: 'minecraft', players: ['Steve'] });
    stateDir = mkdtempSync(join(tmpdir(), 'porter-stores-'));
    const executor = { type: 'rcon', host: rcon.host, port: rcon.port, password: PASSWORD, timeoutMs: 2000, connectTimeoutMs: 2000 };
    config = await parseConfig(
      {
        api: { baseUrl: api.url, token: SIM_TOKEN },
        stores: { 'eu-network': { baseUrl: `${api.url}/`, token: EU_TOKEN } },
        servers: [
          { id: SIM_SERVER_ID, name: 'home', executor, players: { refreshMs: 100 } },
          { id: EU_SERVER_ID, name: 'eu', store: 'eu-network', executor, players: { refreshMs: 100 } },
        ],
        // Long enough that nothing but a wake-up makes a second pull while the test runs.
        poll: { idleMs: 600_000 },
        stateDir,
        shutdown: { drainMs: 3000 },
      },
      stateDir,
      {},
    );
  });

  after(async () => {
    await api.close();
    await rcon.close();
    rmSync(stateDir, { recursive: true, force: true });
  });

  test('the stores at one origin share one connection pool, and each request carries its own store token', async () => {
    const clients = new StoreClients(silent, new SecretBook());
    try {
      const home = clients.clientFor(config, undefined);
      const eu = clients.clientFor(config, 'eu-network');
      assert.notEqual(home, eu);
      assert.equal(clients.clientFor(config, 'eu-network'), eu, 'one client per store');
      // The default store's client warms the pool up: its kept-alive connections are then idle.
      for (let i = 0; i < 4; i++) assert.equal((await checkToken(home)).kind, 'valid');
      const warm = api.connections;
      // One call after the other, so an idle connection is always there: a pool of the eu store's own would have to open one.
      for (const client of [eu, home, eu, eu]) assert.equal((await checkToken(client)).kind, 'valid');
      assert.equal(api.connections, warm, 'the eu store opened connections of its own');
      api.setToken(EU_TOKEN, null);
      assert.equal((await checkToken(eu)).kind, 'invalid-token');
      assert.equal((await checkToken(home)).kind, 'valid');
    } finally {
      api.setToken(EU_TOKEN, SCOPES);
      await clients.closeAll();
    }
  });

  test("wakeStore wakes the loops of that store's servers only; undefined is the default store", async () => {
    const journal = new Journal(stateDir, { now: () => systemClock.now() });
    const fatal: unknown[] = [];
    const fleet = new Fleet(config, {
      journal,
      clock: systemClock,
      logger: silent,
      secrets: new SecretBook(),
      onFatal: (error) => fatal.push(error),
    });
    const pulls = (serverId: string) => api.requests.filter((r) => r.route === 'pull' && r.serverId === serverId).length;
    try {
      const runners = await fleet.assemble();
      await Promise.all(runners.map((runner) => runner.connect()));
      for (const runner of runners) fleet.start(runner, false);
      // Each loop pulls once at start and then idles for idleMs.
      await waitFor(() => pulls(SIM_SERVER_ID) >= 1 && pulls(EU_SERVER_ID) >= 1, { what: 'the first pull of each server' });
      const homePulls = pulls(SIM_SERVER_ID);
      api.enqueue(SIM_SERVER_ID, { command: 'say home' });
      api.enqueue(EU_SERVER_ID, { command: 'say eu' });

      assert.equal(fleet.wakeStore('eu-network'), 1);
      await waitFor(() => api.commands().find((c) => c.command === 'say eu')?.status === 'EXECUTED', { what: 'the eu delivery' });
      assert.equal(api.commands().find((c) => c.command === 'say home')?.status, 'SCHEDULED', 'the default store was not woken');
      assert.equal(pulls(SIM_SERVER_ID), homePulls);

      assert.equal(fleet.wakeStore(undefined), 1);
      await waitFor(() => api.commands().find((c) => c.command === 'say home')?.status === 'EXECUTED', { what: 'the home delivery' });
      assert.equal(fleet.wakeStore('no-such-store'), 0);
      assert.deepEqual(fatal, []);
    } finally {
      await fleet.stop(3000);
      journal.close();
    }
  });
});
