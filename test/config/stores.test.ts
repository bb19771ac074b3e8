import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { chmod } from 'node:fs/promises';
import { parseConfig } from '../../src/config/load.js';
import { ConfigInvalidError } from '../../src/config/errors.js';
import { configSecrets } from '../../src/config/secrets.js';
import { configError, minimal, OTHER_ID, PASSWORD, SERVER_ID, tempDir, TOKEN, type TempDir } from './helpers.js';

/** `stores` and `servers[].store` (docs/design.md#many-stores): what loads, what is refused and how it says so. */

const EU_TOKEN = 'gci_eu_network_5a4b3c2d1e';
const US_TOKEN = 'gci_us_network_9f8e7d6c5b';
const WEBHOOK = 'whsec_c3RvcmUtd2ViaG9vay1zZWNyZXQ=';

function twoStores(stores: Record<string, unknown>, serverStore: unknown = 'eu-network'): Record<string, unknown> {
  return minimal({
    stores,
    servers: [
      { id: SERVER_ID, executor: { type: 'rcon', password: PASSWORD } },
      { id: OTHER_ID, name: 'eu', store: serverStore, executor: { type: 'rcon', password: PASSWORD } },
    ],
  });
}

describe('stores', () => {
  let dir: TempDir;
  before(async () => {
    dir = await tempDir();
    await dir.write('eu-token', `${EU_TOKEN}\r\n`);
    await dir.write('crlf-inside', 'gci_first_half\r\nsecond_half\r\n');
    await dir.write('webhook', `  ${WEBHOOK}\n`);
    await dir.write('creds/porter-api-token-us-network', `${US_TOKEN}\n`);
    for (const file of ['eu-token', 'crlf-inside', 'webhook', 'creds/porter-api-token-us-network'])
      await chmod(`${dir.path}/${file}`, 0o600);
  });
  after(async () => {
    await dir.remove();
  });

  const load = (raw: unknown, env: NodeJS.ProcessEnv = {}) => parseConfig(raw, dir.path, env, '/srv/porter/config.json');
  const problemsOf = async (raw: unknown, env: NodeJS.ProcessEnv = {}) => {
    const error = await configError(load(raw, env));
    assert.ok(error instanceof ConfigInvalidError);
    return error.problems;
  };

  test('a config without stores loads as before: no stores, every server in the store of api', async () => {
    const config = await load(minimal());
    assert.equal(config.stores, undefined);
    assert.equal(config.servers[0]!.store, undefined);
  });

  test('a store with its token in a file (trimmed, CRLF too), its webhook secret, defaults like api; a server names it', async () => {
    const config = await load(
      twoStores({ 'eu-network': { baseUrl: 'https://eu.seller.example.com', tokenFile: 'eu-token', webhookSecretFile: 'webhook' } }),
    );
    const eu = config.stores?.['eu-network'];
    assert.ok(eu);
    assert.equal(eu.token, EU_TOKEN);
    assert.equal(eu.tokenPath, `${dir.path}/eu-token`, 'read again on a 401, like api.tokenFile');
    assert.equal(eu.webhookSecret, WEBHOOK);
    assert.equal(eu.timeoutMs, 10000);
    assert.deepEqual(eu.budget, { perWindow: 120, windowMs: 60000, share: 1 });
    assert.equal(eu.routes.pull, '/v1/seller/servers/{serverId}/commands/pull');
    assert.ok(!('tokenFile' in eu) && !('webhookSecretFile' in eu));
    assert.equal(config.servers[1]!.store, 'eu-network');
    assert.deepEqual(config.warnings, []);
    assert.deepEqual(new Set(configSecrets(config)), new Set([TOKEN, EU_TOKEN, WEBHOOK, PASSWORD]));
  });

  test('a named store takes its token from the systemd credential porter-api-token-<name>, never from PORTER_API_TOKEN', async () => {
    const config = await load(twoStores({ 'us-network': { baseUrl: 'https://seller.example.com' } }, 'us-network'), {
      CREDENTIALS_DIRECTORY: `${dir.path}/creds`,
      PORTER_API_TOKEN: 'gci_default_store_env',
    });
    assert.equal(config.stores?.['us-network']?.token, US_TOKEN);
    assert.equal(config.api.token, 'gci_default_store_env');
  });

  test('a store without a token says which keys and which credential give it', async () => {
    const problems = await problemsOf(twoStores({ 'eu-network': { baseUrl: 'https://eu.seller.example.com' } }), {
      PORTER_API_TOKEN: 'gci_default_store_env',
    });
    assert.deepEqual(problems, [
      'stores.eu-network.token is missing: set stores.eu-network.token or stores.eu-network.tokenFile (a file that holds it) in the config, or under systemd LoadCredential=porter-api-token-eu-network:FILE',
    ]);
  });

  test('a carriage return inside a token is named, and the token is not echoed', async () => {
    const problems = await problemsOf(twoStores({ 'eu-network': { baseUrl: 'https://eu.seller.example.com', tokenFile: 'crlf-inside' } }));
    assert.equal(problems.length, 1);
    assert.match(problems[0]!, /^stores\.eu-network\.token \(from stores\.eu-network\.tokenFile\) contains a carriage return/);
    assert.ok(!problems[0]!.includes('gci_first_half'));
  });

  test('both a secret and its file, or an inline token in a file others can read, are told as for api', async () => {
    const problems = await problemsOf(
      twoStores({ 'eu-network': { baseUrl: 'https://eu.seller.example.com', token: EU_TOKEN, tokenFile: 'eu-token' } }),
    );
    assert.deepEqual(problems, ['stores.eu-network.token and stores.eu-network.tokenFile are both set: keep only one of them']);
    const exposed = await parseConfig(
      twoStores({ 'eu-network': { baseUrl: 'https://eu.seller.example.com', token: EU_TOKEN, webhookSecret: WEBHOOK } }),
      dir.path,
      {},
      '/srv/porter/config.json',
      { fileMode: 0o644 },
    );
    assert.match(
      exposed.warnings?.[0] ?? '',
      /holds api\.token and stores\.eu-network\.token and stores\.eu-network\.webhookSecret and servers/,
    );
  });

  test('a server naming a store that is not configured: the name and the known ones', async () => {
    const problems = await problemsOf(
      twoStores(
        {
          'eu-network': { baseUrl: 'https://eu.seller.example.com', token: EU_TOKEN },
          asia: { baseUrl: 'https://x.example.com', token: US_TOKEN },
        },
        'eu',
      ),
    );
    assert.deepEqual(problems, [
      'servers[1].store: no store "eu" in "stores" (known: "eu-network", "asia"); fix the name or add the store',
    ]);
  });

  test('a server naming a store when there are no stores at all says so', async () => {
    const raw = twoStores({}, 'eu-network');
    delete raw.stores;
    const problems = await problemsOf(raw);
    assert.equal(problems.length, 1);
    assert.match(problems[0]!, /^servers\[1\]\.store: no store "eu-network": the config has no "stores"/);
  });

  test('a store value that is no store name at all (a token pasted there) is not echoed', async () => {
    const problems = await problemsOf(twoStores({ 'eu-network': { baseUrl: 'https://eu.seller.example.com', token: EU_TOKEN } }, US_TOKEN));
    assert.equal(problems.length, 1);
    assert.match(problems[0]!, /^servers\[1\]\.store: not a store name in "stores" \(known: "eu-network"\)/);
    assert.ok(!problems[0]!.includes(US_TOKEN));
  });

  test('bad store names are refused, "default" is taken by the store of api', async () => {
    for (const name of ['EU', '-eu', 'eu_network', 'eu.network', '', 'a'.repeat(64)]) {
      const problems = await problemsOf(minimal({ stores: { [name]: { baseUrl: 'https://x.example.com', token: EU_TOKEN } } }));
      assert.equal(problems.length, 1, `${name}: ${problems.join('; ')}`);
      assert.match(problems[0]!, /a store name is 1 to 63 lowercase letters, digits and "-"/);
    }
    const problems = await problemsOf(minimal({ stores: { default: { baseUrl: 'https://x.example.com', token: EU_TOKEN } } }));
    assert.equal(problems.length, 1);
    assert.match(problems[0]!, /"default" is the name porter gives the store of "api": choose another name/);
    const longest = await load(minimal({ stores: { ['a'.repeat(63)]: { baseUrl: 'https://x.example.com', token: EU_TOKEN } } }));
    assert.ok(longest.stores?.['a'.repeat(63)]);
  });

  test("a store's keys are checked like api's: unknown keys, plain http, a budget that allows nothing", async () => {
    const problems = await problemsOf(
      minimal({
        stores: {
          'eu-network': { baseUrl: 'http://seller.example.com', token: EU_TOKEN, tokn: 'x', budget: { perWindow: 1, share: 0.5 } },
        },
      }),
    );
    assert.equal(problems.length, 3, problems.join('\n'));
    assert.ok(problems.some((p) => p.startsWith('stores.eu-network.baseUrl: plain http:// to seller.example.com')));
    assert.ok(problems.some((p) => p.startsWith('stores.eu-network.tokn: unknown key (did you mean "token"?)')));
    assert.ok(problems.some((p) => p.startsWith('stores.eu-network.budget: perWindow (1) × share (0.5) allows no call at all')));
  });
});
