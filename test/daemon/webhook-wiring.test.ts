import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { systemClock } from '../../src/clock.js';
import { parseConfig } from '../../src/config/load.js';
import { webhookWiring, type WebhookWiring } from '../../src/daemon/webhook-wiring.js';
import { eventBody, post, signedHeaders } from '../peers/webhook-sender.js';

/**
 * Each store's events wake its own servers (docs/design.md#webhook-wake-ups, #many-stores):
 * `POST /webhook/<name>` is verified with `stores.<name>.webhookSecret` and wakes that store;
 * a store without a secret has no endpoint (404), and one store's secret never opens another's.
 */
const EU_SECRET = 'whsec_' + Buffer.from('eu-network-signing-key-0123456789').toString('base64');
const US_SECRET = 'us-plain-text-signing-secret-9876';

describe('webhook wiring with several stores', () => {
  let dir: string;
  let wiring: WebhookWiring;
  const woken: Array<string | undefined> = [];

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'porter-webhook-wiring-'));
    const executor = { type: 'rcon', host: '127.0.0.1', port: 25575, password: 'rcon-secret-4242' };
    const config = await parseConfig(
      {
        api: { baseUrl: 'http://127.0.0.1:9', token: 'gci_default_token_1234' },
        stores: {
          'eu-network': { baseUrl: 'http://127.0.0.1:9', token: 'gci_eu_token_5678', webhookSecret: EU_SECRET },
          'us-network': { baseUrl: 'http://127.0.0.1:9', token: 'gci_us_token_9012', webhookSecret: US_SECRET },
          quiet: { baseUrl: 'http://127.0.0.1:9', token: 'gci_quiet_token_3456' },
        },
        servers: [
          { id: '1b4e28ba-2fa1-11d2-883f-0016d3cca427', executor },
          { id: '2c5f39cb-3fb2-42e3-994f-1127e4ddb538', store: 'eu-network', executor },
        ],
        webhook: { listen: '127.0.0.1:0' },
        stateDir: dir,
      },
      dir,
      {},
    );
    wiring = webhookWiring(config, { logger: pino({ level: 'silent' }), clock: systemClock, wake: (store) => woken.push(store) })!;
    await wiring.start();
  });

  after(async () => {
    await wiring?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const url = (path: string) => `http://127.0.0.1:${String(wiring.port())}${path}`;

  test('a signed payment event on /webhook/<name> wakes that store, and only that store', async () => {
    woken.length = 0;
    const body = eventBody({});
    const sent = await post(url('/webhook/eu-network'), body, signedHeaders(EU_SECRET, body));
    assert.equal(sent.status, 204);
    const us = eventBody({});
    assert.equal((await post(url('/webhook/us-network'), us, signedHeaders(US_SECRET, us))).status, 204);
    assert.deepEqual(woken, ['eu-network', 'us-network']);
  });

  test("one store's secret does not open another store's endpoint", async () => {
    woken.length = 0;
    const body = eventBody({});
    assert.equal((await post(url('/webhook/us-network'), body, signedHeaders(EU_SECRET, body))).status, 401);
    assert.deepEqual(woken, []);
  });

  test('a store without a webhook secret, and the default store without one, have no endpoint (404)', async () => {
    woken.length = 0;
    for (const path of ['/webhook', '/webhook/quiet', '/webhook/nowhere']) {
      const body = eventBody({});
      assert.equal((await post(url(path), body, signedHeaders(EU_SECRET, body))).status, 404, path);
    }
    assert.deepEqual(woken, []);
  });
});

test("a named store's whsec_ secret that is not base64 is a configuration error naming its key", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'porter-webhook-wiring-'));
  try {
    await assert.rejects(
      parseConfig(
        {
          api: { baseUrl: 'http://127.0.0.1:9', token: 'gci_default_token_1234' },
          stores: { eu: { baseUrl: 'http://127.0.0.1:9', token: 'gci_eu_token_5678', webhookSecret: 'whsec_not*base64!' } },
          servers: [{ id: '1b4e28ba-2fa1-11d2-883f-0016d3cca427', store: 'eu', executor: { type: 'rcon', password: 'rcon-secret-4242' } }],
          webhook: { listen: '127.0.0.1:0' },
          stateDir: dir,
        },
        dir,
        {},
      ),
      /stores\.eu\.webhookSecret starts with "whsec_" but what follows is not base64/,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
