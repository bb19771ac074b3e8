import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Budget } from '../../../src/api/budget/budget.js';
import { createApiClient } from '../../../src/api/wire/client.js';
import { InvalidTokenError } from '../../../src/api/errors.js';
import { createServerApi } from '../../../src/api/server-api.js';
import { systemClock } from '../../../src/clock.js';
import { SIM_SERVER_ID, startSellerApi, type FakeSellerApi } from '../../../src/sim/seller-api.js';
import { apiConfig, assertNoSecret, silent } from '../helpers.js';

/**
 * A store owner rotates the API token under a running porter: the old token is refused (401), the
 * new one is in the token file. porter reads the file again once, sends the same request with the
 * new token and goes on; only when the file holds nothing newer does the 401 stand.
 */

const OLD = 'gci_old-token-aaaaaaaaaaaa';
const NEW = 'gci_new-token-bbbbbbbbbbbb';
const SCOPES = ['commands:execute', 'servers:read'];

describe('API token rotated on disk', () => {
  let api: FakeSellerApi;
  let dir: string;
  before(async () => {
    api = await startSellerApi({ tokens: { [OLD]: SCOPES } });
    dir = mkdtempSync(join(tmpdir(), 'porter-token-'));
  });
  after(async () => {
    await api.close();
    rmSync(dir, { recursive: true, force: true });
  });

  function serverApi(tokenPath: string | undefined, token = OLD) {
    const client = createApiClient(apiConfig(api.url, { token, ...(tokenPath !== undefined && { tokenPath }) }), { logger: silent() });
    const budget = new Budget({ perWindow: 120, windowMs: 60_000, share: 1 }, systemClock);
    return { client, budget, server: createServerApi({ client, serverId: SIM_SERVER_ID, budget, clock: systemClock, logger: silent() }) };
  }

  test('a 401 with a new token in the file: the same pull is sent again with it and claims the command', async () => {
    api.setToken(OLD, SCOPES);
    const file = join(dir, 'token-a');
    writeFileSync(file, `${OLD}\n`);
    const { client, budget, server } = serverApi(file);
    try {
      const id = api.enqueue(SIM_SERVER_ID, { command: 'say rotated' });
      assert.equal((await server.pull([])).kind, 'claimed');
      assert.equal(await server.done(id), 'accepted');

      api.setToken(NEW, SCOPES);
      api.setToken(OLD, null);
      writeFileSync(file, `${NEW}\n`);
      const next = api.enqueue(SIM_SERVER_ID, { command: 'say after rotation' });
      const before401 = api.requests.length;
      const result = await server.pull([]);
      assert.deepEqual(result, { kind: 'claimed', id: next, command: 'say after rotation' });
      assert.deepEqual(
        api.requests.slice(before401).map((r) => [r.route, r.status]),
        [
          ['pull', 401],
          ['pull', 200],
        ],
        'one refused pull, then the same pull with the new token',
      );
      assert.equal(budget.snapshot().pull.used, 3, 'the repeated pull counts against the budget like any call');
      assert.equal(await server.done(next), 'accepted', 'later calls carry the new token');
      assert.equal(client.redact(`x ${OLD} ${NEW}`), 'x [Redacted] [Redacted]', 'both tokens stay scrubbed');
    } finally {
      await client.close();
    }
  });

  test('a 401 while the file still holds the refused token: InvalidTokenError after one read, no second send', async () => {
    api.setToken(OLD, null);
    const file = join(dir, 'token-b');
    writeFileSync(file, OLD);
    const { client, server } = serverApi(file);
    try {
      const before401 = api.requests.length;
      const error = await server.pull([]).catch((e: unknown) => e);
      assert.ok(error instanceof InvalidTokenError, String(error));
      assertNoSecret(error, OLD);
      assert.deepEqual(
        api.requests.slice(before401).map((r) => r.status),
        [401],
      );
    } finally {
      await client.close();
    }
  });

  test('a token from the environment or inline is fixed: a 401 stands at once', async () => {
    api.setToken(OLD, null);
    api.setToken(NEW, SCOPES);
    const { client, server } = serverApi(undefined);
    try {
      const error = await server.pull([]).catch((e: unknown) => e);
      assert.ok(error instanceof InvalidTokenError, String(error));
    } finally {
      await client.close();
    }
  });

  test('concurrent 401s on three servers read the file once and all go on with the new token', async () => {
    api.setToken(OLD, SCOPES);
    api.setToken(NEW, null);
    let reads = 0;
    const client = createApiClient(apiConfig(api.url, { token: OLD }), {
      logger: silent(),
      readToken: () => {
        reads++;
        return Promise.resolve(NEW);
      },
    });
    try {
      api.setToken(OLD, null);
      api.setToken(NEW, SCOPES);
      const servers = [0, 1, 2].map(() =>
        createServerApi({
          client,
          serverId: SIM_SERVER_ID,
          budget: new Budget({ perWindow: 120, windowMs: 60_000, share: 1 }, systemClock),
          clock: systemClock,
          logger: silent(),
        }),
      );
      const results = await Promise.all(servers.map((s) => s.pull([])));
      assert.deepEqual(
        results.map((r) => r.kind),
        ['empty', 'empty', 'empty'],
      );
      assert.equal(reads, 1);
    } finally {
      await client.close();
    }
  });
});
