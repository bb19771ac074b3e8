import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { parseConfig } from '../../src/config/load.js';
import { configSecrets, MAX_SECRET_LENGTH, readSecretAgain } from '../../src/config/secrets.js';
import { configError, minimal, PASSWORD, SERVER_ID, tempDir, TOKEN } from './helpers.js';
import type { TempDir } from './helpers.js';

const FILE_TOKEN = 'gci_from_file_0001';
const ENV_TOKEN = 'gci_from_env_0002';
const CRED_TOKEN = 'gci_from_credential_0003';

function withApi(api: Record<string, unknown>, executor: Record<string, unknown> = { type: 'rcon', password: PASSWORD }) {
  return minimal({ api: { baseUrl: 'https://seller.example.com', ...api }, servers: [{ id: SERVER_ID, executor }] });
}

describe('secrets', () => {
  let dir: TempDir;
  let credentials: string;
  before(async () => {
    dir = await tempDir();
    await dir.write('secrets/token', `\n  ${FILE_TOKEN}  \n`);
    await dir.write('secrets/rcon', `${PASSWORD}-file\n`);
    await dir.write('secrets/empty', '\n');
    await dir.write('creds/porter-api-token', `${CRED_TOKEN}\n`);
    await dir.write('creds/porter-rcon-password', 'pw-from-credential\n');
    await dir.write('creds/custom-name', 'gci_custom_credential\n');
    await dir.write('creds-plain/porter-api-token', 'plain-test-token\n');
    credentials = `${dir.path}/creds`;
  });
  after(async () => {
    await dir.remove();
  });

  const load = (raw: unknown, env: NodeJS.ProcessEnv = {}) => parseConfig(raw, dir.path, env);

  describe('API token precedence', () => {
    test('the inline api.token is used as written', async () => {
      const config = await load(withApi({ token: TOKEN }));
      assert.equal(config.api.token, TOKEN);
      assert.deepEqual(config.warnings, []);
      assert.ok(!('tokenFile' in config.api));
    });

    test('api.tokenFile is read relative to the config folder and trimmed', async () => {
      const config = await load(withApi({ tokenFile: 'secrets/token' }));
      assert.equal(config.api.token, FILE_TOKEN);
    });

    test('PORTER_API_TOKEN beats both the inline value and the file, with a warning naming what it overrides', async () => {
      const inline = await load(withApi({ token: TOKEN }), { PORTER_API_TOKEN: ENV_TOKEN });
      assert.equal(inline.api.token, ENV_TOKEN);
      assert.deepEqual(inline.warnings, ['PORTER_API_TOKEN is set in the environment and overrides api.token from the configuration file']);
      const file = await load(withApi({ tokenFile: 'secrets/token' }), { PORTER_API_TOKEN: ENV_TOKEN });
      assert.equal(file.api.token, ENV_TOKEN);
      for (const warning of file.warnings ?? []) assert.ok(!warning.includes(ENV_TOKEN) && !warning.includes(FILE_TOKEN));
    });

    test('an empty PORTER_API_TOKEN counts as unset', async () => {
      const config = await load(withApi({ token: TOKEN }), { PORTER_API_TOKEN: '' });
      assert.equal(config.api.token, TOKEN);
    });

    test('the systemd credential is the last resort', async () => {
      const config = await load(withApi({}), { CREDENTIALS_DIRECTORY: credentials });
      assert.equal(config.api.token, CRED_TOKEN);
      const inline = await load(withApi({ token: TOKEN }), { CREDENTIALS_DIRECTORY: credentials });
      assert.equal(inline.api.token, TOKEN);
    });

    test('api.tokenFile may point into $CREDENTIALS_DIRECTORY', async () => {
      for (const tokenFile of ['$CREDENTIALS_DIRECTORY/custom-name', '${CREDENTIALS_DIRECTORY}/custom-name']) {
        const config = await load(withApi({ tokenFile }), { CREDENTIALS_DIRECTORY: credentials });
        assert.equal(config.api.token, 'gci_custom_credential');
      }
    });

    test('$CREDENTIALS_DIRECTORY outside systemd is a clear error', async () => {
      const error = await configError(load(withApi({ tokenFile: '$CREDENTIALS_DIRECTORY/custom-name' })));
      assert.match(error.message, /api\.tokenFile: refers to \$CREDENTIALS_DIRECTORY, which is not set/);
    });

    test('a missing token names the key and every way to provide it', async () => {
      const error = await configError(load(withApi({})));
      assert.match(error.message, /api\.token is missing/);
      assert.match(error.message, /api\.tokenFile/);
      assert.match(error.message, /PORTER_API_TOKEN/);
      assert.match(error.message, /LoadCredential=porter-api-token/);
    });

    test('token and tokenFile together are refused', async () => {
      const error = await configError(load(withApi({ token: TOKEN, tokenFile: 'secrets/token' })));
      assert.match(error.message, /api\.token and api\.tokenFile are both set/);
      assert.ok(!error.message.includes(TOKEN) && !error.message.includes(FILE_TOKEN));
    });

    test('a token file that is missing or empty is named, its content never shown', async () => {
      const missing = await configError(load(withApi({ tokenFile: 'secrets/nope' })));
      assert.match(missing.message, /api\.tokenFile: cannot read .*secrets\/nope: no such file/);
      const empty = await configError(load(withApi({ tokenFile: 'secrets/empty' })));
      assert.match(empty.message, /api\.tokenFile: .*secrets\/empty is empty/);
    });

    test('a token with a line break inside is refused without printing it', async () => {
      const bad = 'gci_first_half\nsecond_half';
      const error = await configError(load(withApi({ token: bad })));
      assert.match(error.message, /api\.token contains whitespace or control characters/);
      assert.ok(!error.message.includes('gci_first_half') && !error.message.includes('second_half'));
    });

    test('a token with a character beyond ASCII is refused as porter init refuses it: no HTTP header could carry it', async () => {
      const bad = 'gci_copied\u20ACfrom_a_pdf';
      const error = await configError(load(withApi({ token: bad })));
      assert.match(error.message, /api\.token contains whitespace or control characters \(or characters beyond ASCII\)/);
      assert.ok(!error.message.includes('copied'));
    });

    test('a trailing CR on any secret from the environment is named as such, the secret never shown', async () => {
      const token = await configError(load(withApi({ token: TOKEN }), { PORTER_API_TOKEN: `${ENV_TOKEN}\r` }));
      assert.match(
        token.message,
        /PORTER_API_TOKEN ends with a carriage return \(CR, "\\r"\), most likely from an env file saved with Windows line endings/,
      );
      assert.ok(!token.message.includes(ENV_TOKEN));
      const password = await configError(load(withApi({ token: TOKEN }), { PORTER_RCON_PASSWORD: 'rcon-secret-42\r\n' }));
      assert.match(password.message, /PORTER_RCON_PASSWORD ends with a carriage return \(CR, "\\r"\)/);
      assert.match(password.message, /dos2unix/);
      assert.ok(!password.message.includes('rcon-secret-42'));
      const inside = await configError(load(withApi({ token: TOKEN }), { PORTER_RCON_PASSWORD: 'rcon\rsecret' }));
      assert.match(inside.message, /PORTER_RCON_PASSWORD contains a carriage return/);
      // The same CR in a secret file is trimmed with the other whitespace: no problem there.
      await dir.write('secrets/rcon-crlf', 'rcon-from-file\r\n');
      const config = await load(withApi({ token: TOKEN }, { type: 'rcon', passwordFile: 'secrets/rcon-crlf' }));
      assert.deepEqual(configSecrets(config).sort(), [TOKEN, 'rcon-from-file'].sort());
    });

    test('a problem with a token from the environment says where it came from', async () => {
      const error = await configError(load(withApi({}), { PORTER_API_TOKEN: 'gci_a b' }));
      assert.match(error.message, /api\.token \(from PORTER_API_TOKEN\) contains whitespace/);
      const config = await load(withApi({}), { CREDENTIALS_DIRECTORY: `${dir.path}/creds-plain` });
      assert.match(config.warnings?.[0] ?? '', /api\.token \(from the systemd credential porter-api-token\) does not start with "gci_"/);
    });

    test('a token without the gci_ prefix loads with a warning', async () => {
      const config = await load(withApi({ token: 'test-token-123' }));
      assert.equal(config.api.token, 'test-token-123');
      assert.equal(config.warnings?.length, 1);
      assert.match(config.warnings?.[0] ?? '', /api\.token does not start with "gci_"/);
      assert.ok(!(config.warnings?.[0] ?? '').includes('test-token-123'));
    });
  });

  describe('RCON password precedence', () => {
    const rcon = (executor: Record<string, unknown>) => withApi({ token: TOKEN }, { type: 'rcon', ...executor });

    test('inline, then passwordFile (trimmed), then the systemd credential', async () => {
      const inline = await load(rcon({ password: PASSWORD }), { CREDENTIALS_DIRECTORY: credentials });
      assert.equal(passwordOf(inline), PASSWORD);
      const file = await load(rcon({ passwordFile: './secrets/rcon' }));
      assert.equal(passwordOf(file), `${PASSWORD}-file`);
      const credential = await load(rcon({}), { CREDENTIALS_DIRECTORY: credentials });
      assert.equal(passwordOf(credential), 'pw-from-credential');
    });

    test('PORTER_RCON_PASSWORD beats the config for every rcon and webrcon server', async () => {
      const raw = minimal({
        servers: [
          { id: SERVER_ID, executor: { type: 'rcon', passwordFile: 'secrets/rcon' } },
          { id: '2c5f39cb-3fb2-42e3-994f-1127e4ddb538', executor: { type: 'webrcon' } },
        ],
      });
      const config = await load(raw, { PORTER_RCON_PASSWORD: 'pw-from-env' });
      assert.deepEqual(config.servers.map(passwordFromServer), ['pw-from-env', 'pw-from-env']);
      assert.deepEqual(config.warnings, [
        'PORTER_RCON_PASSWORD is set in the environment and overrides servers[0].executor.passwordFile from the configuration file',
      ]);
    });

    test("a missing password names the server's key and every way to provide it", async () => {
      const error = await configError(load(rcon({})));
      assert.match(error.message, /servers\[0\]\.executor\.password is missing/);
      assert.match(error.message, /servers\[0\]\.executor\.passwordFile/);
      assert.match(error.message, /PORTER_RCON_PASSWORD/);
      assert.match(error.message, /LoadCredential=porter-rcon-password/);
    });

    test('a script executor needs no password', async () => {
      const config = await load(withApi({ token: TOKEN }, { type: 'script', exec: ['/bin/true'] }));
      assert.ok(!('password' in (config.servers[0]?.executor ?? {})));
    });

    test('every secret problem is reported at once', async () => {
      const raw = minimal({
        api: { baseUrl: 'https://seller.example.com' },
        servers: [
          { id: SERVER_ID, executor: { type: 'rcon' } },
          { id: '2c5f39cb-3fb2-42e3-994f-1127e4ddb538', executor: { type: 'rcon', passwordFile: 'secrets/none' } },
        ],
      });
      const error = await configError(load(raw));
      assert.equal((error as { problems?: readonly string[] }).problems?.length, 3);
    });

    test('a password shorter than 4 characters loads with a warning that it cannot be scrubbed', async () => {
      const config = await load(rcon({ password: 'abc' }));
      assert.equal(passwordOf(config), 'abc');
      assert.match(config.warnings?.[0] ?? '', /servers\[0\]\.executor\.password is shorter than 4 characters/);
    });
  });

  describe('a secret longer than MAX_SECRET_LENGTH is refused, named by where it came from, never shown', () => {
    const huge = `gci_${'0123456789abcdef'.repeat(MAX_SECRET_LENGTH / 16)}`;
    const atLimit = huge.slice(0, MAX_SECRET_LENGTH);
    before(async () => {
      await dir.write('secrets/huge', `${huge}\n`);
      await dir.write('secrets/at-limit', `${atLimit}\n`);
      await dir.write('creds-huge/porter-rcon-password', huge);
    });

    const refused = async (raw: unknown, env: NodeJS.ProcessEnv, where: RegExp) => {
      const error = await configError(load(raw, env));
      assert.match(error.message, where);
      assert.match(
        error.message,
        new RegExp(`holds ${huge.length} characters, more than the ${MAX_SECRET_LENGTH} porter accepts for a secret`),
      );
      assert.match(error.message, /put only the secret there/);
      assert.ok(!error.message.includes(huge.slice(0, 32)) && !error.message.includes(huge.slice(-32)), error.message);
    };

    test('from every source: variable, inline value, file, systemd credential, a store, a webhook secret', async () => {
      await refused(withApi({}), { PORTER_API_TOKEN: huge }, /PORTER_API_TOKEN holds/);
      await refused(withApi({ token: huge }), {}, /api\.token holds/);
      await refused(withApi({ tokenFile: 'secrets/huge' }), {}, /api\.tokenFile: \S+secrets\/huge holds/);
      await refused(
        withApi({ token: TOKEN }, { type: 'rcon' }),
        { CREDENTIALS_DIRECTORY: `${dir.path}/creds-huge` },
        /the systemd credential \S+porter-rcon-password holds/,
      );
      await refused(
        withApi({ token: TOKEN }, { type: 'rcon', passwordFile: 'secrets/huge' }),
        {},
        /servers\[0\]\.executor\.passwordFile: \S+huge holds/,
      );
      await refused(
        minimal({ stores: { eu: { baseUrl: 'https://eu.example.com', tokenFile: 'secrets/huge' } } }),
        {},
        /stores\.eu\.tokenFile: \S+huge holds/,
      );
      await refused(withApi({ token: TOKEN, webhookSecret: huge }), {}, /api\.webhookSecret holds/);
    });

    test('a secret of exactly MAX_SECRET_LENGTH characters is taken', async () => {
      const config = await load(withApi({ tokenFile: 'secrets/at-limit' }));
      assert.equal(config.api.token, atLimit);
    });

    test('a token file read again after a 401 that holds too much is not used, and says why', async () => {
      const problems: string[] = [];
      assert.equal(await readSecretAgain(`${dir.path}/secrets/huge`, (problem) => problems.push(problem)), undefined);
      assert.equal(problems.length, 1);
      assert.match(problems[0]!, /holds \d+ characters, more than the \d+ porter accepts/);
      assert.ok(!problems[0]!.includes(huge.slice(0, 32)));
      assert.equal(await readSecretAgain(`${dir.path}/secrets/at-limit`, (problem) => problems.push(problem)), atLimit);
      assert.equal(problems.length, 1);
    });
  });

  test('no secret value ever appears in an error message', async () => {
    const secrets = [TOKEN, PASSWORD, FILE_TOKEN, ENV_TOKEN, CRED_TOKEN, 'pw-from-credential'];
    const cases: [unknown, NodeJS.ProcessEnv][] = [
      [withApi({ token: TOKEN, tokenFile: 'secrets/token' }), { PORTER_API_TOKEN: ENV_TOKEN }],
      [withApi({ token: TOKEN }, { type: 'rcon', password: PASSWORD, passwordFile: 'secrets/rcon' }), {}],
      [{ ...withApi({ token: TOKEN }), api: { baseUrl: `http://${PASSWORD}@seller.example.com`, token: TOKEN } }, {}],
      [withApi({ token: TOKEN }, { type: 'rcon', password: PASSWORD, port: PASSWORD }), { CREDENTIALS_DIRECTORY: credentials }],
      [withApi({ token: `${TOKEN} ${PASSWORD}` }, { type: 'rcon', password: PASSWORD }), {}],
    ];
    for (const [raw, env] of cases) {
      const error = await configError(load(raw, env));
      for (const secret of secrets) assert.ok(!error.message.includes(secret), `"${secret}" leaked into: ${error.message}`);
    }
  });

  test('configSecrets lists the token and every password for the log scrubber', async () => {
    const config = await load(
      minimal({
        servers: [
          { id: SERVER_ID, executor: { type: 'rcon', password: PASSWORD } },
          { id: '2c5f39cb-3fb2-42e3-994f-1127e4ddb538', executor: { type: 'script', exec: ['/bin/true'] } },
        ],
      }),
    );
    assert.deepEqual(configSecrets(config), [TOKEN, PASSWORD]);
  });
});

function passwordFromServer(server: { executor: object }): string | undefined {
  return 'password' in server.executor ? (server.executor.password as string) : undefined;
}

function passwordOf(config: { servers: { executor: object }[] }): string | undefined {
  const first = config.servers[0];
  return first ? passwordFromServer(first) : undefined;
}
