import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { parseConfig } from '../../src/config/load.js';
import { configSecrets } from '../../src/config/secrets.js';
import { configError, minimal, PASSWORD, SERVER_ID, tempDir, TOKEN, type TempDir } from './helpers.js';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

function withWebhook(api: Record<string, unknown>, webhook: Record<string, unknown> | null = { listen: '127.0.0.1:8787' }) {
  return minimal({
    api: { baseUrl: 'https://seller.example.com', token: TOKEN, ...api },
    servers: [{ id: SERVER_ID, executor: { type: 'rcon', password: PASSWORD } }],
    ...(webhook && { webhook }),
  });
}

describe('the webhook configuration', () => {
  let dir: TempDir;
  before(async () => {
    dir = await tempDir();
    await dir.write('webhook-secret', `${SECRET}\n`);
    await dir.write('webhook-secret-crlf', `${SECRET}\r\nwhsec_c2Vjb25kIGxpbmU=\r\n`);
    await dir.write('creds/porter-webhook-secret', 'credential-secret-text\n');
  });
  after(async () => dir.remove());
  const load = (raw: unknown, env: NodeJS.ProcessEnv = {}) => parseConfig(raw, dir.path, env);

  test('defaults, and the secret read from its file; it is one of the secrets scrubbed everywhere', async () => {
    const config = await load(withWebhook({ webhookSecretFile: 'webhook-secret' }));
    assert.deepEqual(config.webhook, { listen: '127.0.0.1:8787', toleranceS: 300, maxBodyBytes: 65536, scheme: 'standard' });
    assert.equal(config.api.webhookSecret, SECRET);
    assert.ok(configSecrets(config).includes(SECRET));
    assert.ok(!('webhookSecretFile' in config.api));
  });

  test('PORTER_WEBHOOK_SECRET and the systemd credential porter-webhook-secret', async () => {
    assert.equal((await load(withWebhook({}), { PORTER_WEBHOOK_SECRET: 'from-env-secret' })).api.webhookSecret, 'from-env-secret');
    const fromCredential = await load(withWebhook({}), { CREDENTIALS_DIRECTORY: `${dir.path}/creds` });
    assert.equal(fromCredential.api.webhookSecret, 'credential-secret-text');
  });

  test('a webhook without a secret is a configuration error naming every way to give one', async () => {
    const error = await configError(load(withWebhook({})));
    assert.match(error.message, /api\.webhookSecret is missing: set api\.webhookSecret or api\.webhookSecretFile/);
    assert.match(error.message, /PORTER_WEBHOOK_SECRET/);
    assert.match(error.message, /porter-webhook-secret/);
  });

  test('a carriage return left inside the secret file is named; a whsec_ secret that is not base64 too', async () => {
    // trim() takes the last line end away, not one inside (a file of two lines, saved on Windows).
    const crlf = await configError(load(withWebhook({ webhookSecretFile: 'webhook-secret-crlf' })));
    assert.match(crlf.message, /api\.webhookSecret \(from api\.webhookSecretFile\) contains a carriage return/);
    assert.ok(!crlf.message.includes(SECRET));
    const bad = await configError(load(withWebhook({ webhookSecret: 'whsec_***' })));
    assert.match(bad.message, /starts with "whsec_" but what follows is not base64/);
  });

  test('a secret without a listener is read (a broken file shows now) and warned about', async () => {
    const config = await load(withWebhook({ webhookSecret: SECRET }, null));
    assert.equal(config.webhook, undefined);
    assert.ok(config.warnings?.some((w) => /api\.webhookSecret is set but webhook\.listen is not/.test(w)));
    await configError(load(withWebhook({ webhookSecretFile: 'missing-file' }, null)));
  });

  test('listen, tolerance, body bound and scheme are checked; TLS paths resolve against the config folder', async () => {
    const error = await configError(
      load(
        withWebhook(
          { webhookSecret: SECRET },
          { listen: '127.0.0.1:70000', toleranceS: 0, maxBodyBytes: 10, scheme: { header: 'bad header', encoding: 'hex' } },
        ),
      ),
    );
    for (const key of ['webhook.listen', 'webhook.toleranceS', 'webhook.maxBodyBytes', 'webhook.scheme'])
      assert.match(error.message, new RegExp(key.replace('.', '\\.')));
    const tls = await load(
      withWebhook({ webhookSecret: SECRET }, { listen: '0.0.0.0:8443', tls: { certFile: 'cert.pem', keyFile: '/etc/key.pem' } }),
    );
    assert.deepEqual(tls.webhook?.tls, { certFile: `${dir.path}/cert.pem`, keyFile: '/etc/key.pem' });
    const header = await load(
      withWebhook(
        { webhookSecret: 'raw' + 'text' },
        { listen: '127.0.0.1:1', scheme: { header: 'X-Signature-256', encoding: 'hex', prefix: 'sha256=' } },
      ),
    );
    assert.deepEqual(header.webhook?.scheme, { header: 'X-Signature-256', encoding: 'hex', prefix: 'sha256=' });
  });
});
