import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { scriptEnv } from '../../../src/protocols/script/env.js';

describe('a delivery script environment', () => {
  test("porter's secrets never reach it: the token, the passwords, the webhook secret, and the credentials directory", () => {
    const env = scriptEnv(
      {
        PATH: '/usr/bin',
        PORTER_API_TOKEN: 'gci_x',
        PORTER_RCON_PASSWORD: 'pw',
        PORTER_WEBHOOK_SECRET: 'whsec_AAAA',
        PORTER_WEBHOOK_SECRET_FILE: '/etc/porter/webhook-secret',
        CREDENTIALS_DIRECTORY: '/run/credentials/porter.service',
        PORTER_CONFIG: '/etc/porter/config.json',
      },
      { PORTER_COMMAND: 'say hi' },
    );
    assert.deepEqual(env, { PATH: '/usr/bin', PORTER_CONFIG: '/etc/porter/config.json', PORTER_COMMAND: 'say hi' });
  });
});
