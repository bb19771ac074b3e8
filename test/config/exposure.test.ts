import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { chmod } from 'node:fs/promises';
import { loadConfig } from '../../src/config/load.js';
import { minimal, PASSWORD, SERVER_ID, tempDir, TOKEN } from './helpers.js';
import type { TempDir } from './helpers.js';

/**
 * A secret other users can read, or a health endpoint on the network, loads with
 * one warning line each that names the file (or address) and the fix; the safe setups load
 * without one.
 */

describe('warnings about exposed secrets and endpoints', () => {
  let dir: TempDir;
  before(async () => {
    dir = await tempDir();
  });
  after(async () => {
    await dir.remove();
  });

  async function write(name: string, content: unknown, mode: number): Promise<string> {
    const path = await dir.write(name, typeof content === 'string' ? content : JSON.stringify(content));
    await chmod(path, mode);
    return path;
  }

  const warningsOf = async (path: string, env: NodeJS.ProcessEnv = {}) => (await loadConfig(path, env)).warnings ?? [];

  describe('a secret inline in the config file', () => {
    test('an API token in a file others can read: one warning naming the file, its mode and the fix', async () => {
      const path = await write(
        'readable-token.json',
        minimal({ servers: [{ id: SERVER_ID, executor: { type: 'script', exec: ['/bin/true'] } }] }),
        0o644,
      );
      const warnings = await warningsOf(path);
      assert.equal(warnings.length, 1, warnings.join('\n'));
      assert.match(warnings[0]!, new RegExp(`^${path} holds api\\.token and other users can read it \\(mode 0644\\): chmod 600 ${path}`));
      assert.match(warnings[0]!, /api\.tokenFile/);
      assert.ok(!warnings[0]!.includes(TOKEN));
    });

    test('group-readable counts too, and an inline RCON password is named with the token', async () => {
      const path = await write('group-readable.json', minimal(), 0o640);
      const warnings = await warningsOf(path);
      assert.equal(warnings.length, 1, warnings.join('\n'));
      assert.match(warnings[0]!, /holds api\.token and servers\[0\]\.executor\.password and other users can read it \(mode 0640\)/);
      assert.ok(!warnings[0]!.includes(PASSWORD));
    });

    test('the token is still in the file when PORTER_API_TOKEN overrides it: still a warning', async () => {
      const path = await write(
        'overridden.json',
        minimal({ servers: [{ id: SERVER_ID, executor: { type: 'script', exec: ['/bin/true'] } }] }),
        0o644,
      );
      const warnings = await warningsOf(path, { PORTER_API_TOKEN: 'gci_from_env_1234' });
      assert.ok(
        warnings.some((w) => w.startsWith(`${path} holds api.token`)),
        warnings.join('\n'),
      );
    });

    test('mode 0600: no warning', async () => {
      const path = await write('private.json', minimal(), 0o600);
      assert.deepEqual(await warningsOf(path), []);
    });

    test('a readable config without secrets in it (the systemd layout): no warning', async () => {
      await write('secrets/token-private', `${TOKEN}\n`, 0o600);
      await write('secrets/rcon-private', `${PASSWORD}\n`, 0o600);
      const path = await write(
        'no-secrets.json',
        {
          api: { baseUrl: 'https://seller.example.com', tokenFile: 'secrets/token-private' },
          servers: [{ id: SERVER_ID, executor: { type: 'rcon', passwordFile: 'secrets/rcon-private' } }],
        },
        0o644,
      );
      assert.deepEqual(await warningsOf(path), []);
    });
  });

  describe('a secret file others can read', () => {
    test('api.tokenFile readable by others: one warning naming the key, the file, its mode and the fix', async () => {
      const token = await write('secrets/token-open', `${TOKEN}\n`, 0o644);
      const path = await write(
        'token-file.json',
        minimal({
          api: { baseUrl: 'https://seller.example.com', tokenFile: token },
          servers: [{ id: SERVER_ID, executor: { type: 'script', exec: ['/bin/true'] } }],
        }),
        0o600,
      );
      assert.deepEqual(await warningsOf(path), [
        `api.tokenFile: ${token} can be read by other users (mode 0644): chmod 600 ${token} (owned by the user porter runs as)`,
      ]);
    });

    test("passwordFile readable by the group: a warning naming the server's key", async () => {
      const secret = await write('secrets/rcon-group', `${PASSWORD}\n`, 0o640);
      const path = await write(
        'password-file.json',
        minimal({ servers: [{ id: SERVER_ID, executor: { type: 'rcon', passwordFile: secret } }] }),
        0o600,
      );
      const warnings = await warningsOf(path);
      assert.deepEqual(warnings, [
        `servers[0].executor.passwordFile: ${secret} can be read by other users (mode 0640): chmod 600 ${secret} (owned by the user porter runs as)`,
      ]);
    });

    test('a file systemd passes in as a credential is private to the service: no warning', async () => {
      await write('creds/api-token', `${TOKEN}\n`, 0o644);
      const path = await write(
        'credential.json',
        {
          api: { baseUrl: 'https://seller.example.com', tokenFile: '$CREDENTIALS_DIRECTORY/api-token' },
          servers: [{ id: SERVER_ID, executor: { type: 'script', exec: ['/bin/true'] } }],
        },
        0o600,
      );
      assert.deepEqual(await warningsOf(path, { CREDENTIALS_DIRECTORY: `${dir.path}/creds` }), []);
    });
  });

  describe('health.listen off loopback', () => {
    for (const listen of ['0.0.0.0:9464', '[::]:9464', '192.168.1.20:9464', 'monitoring.example.com:9464']) {
      test(`${listen}: one warning naming the address, the file and the fix`, async () => {
        const path = await write('listen-open.json', minimal({ health: { listen } }), 0o600);
        const warnings = await warningsOf(path);
        assert.equal(warnings.length, 1, warnings.join('\n'));
        assert.match(
          warnings[0]!,
          new RegExp(`^health\\.listen ${listen.replace(/[[\]().]/g, '\\$&')} in ${path} is not a loopback address: /healthz and /metrics`),
        );
        assert.match(warnings[0]!, /use 127\.0\.0\.1:9464 unless a scraper on another host needs it/);
      });
    }

    for (const listen of ['127.0.0.1:9464', '[::1]:9464', 'localhost:9464', '[::ffff:127.0.0.1]:9464', '127.0.0.1:0']) {
      test(`${listen}: no warning`, async () => {
        const path = await write('listen-loopback.json', minimal({ health: { listen } }), 0o600);
        assert.deepEqual(await warningsOf(path), []);
      });
    }
  });
});
