import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { parseConfig } from '../../src/config/load.js';
import { ConfigInvalidError } from '../../src/config/errors.js';
import { formatKeyPath } from '../../src/config/issues.js';
import { TRANSPORTS } from '../../src/protocols/transport-registry.js';
import { configError, minimal, OTHER_ID, PASSWORD, SERVER_ID, TOKEN } from './helpers.js';

async function problemsOf(raw: unknown, env: NodeJS.ProcessEnv = {}): Promise<readonly string[]> {
  const error = await configError(parseConfig(raw, '/srv/porter', env, '/srv/porter/config.json'));
  assert.ok(error instanceof ConfigInvalidError);
  assert.match(error.message, /^Invalid configuration in \/srv\/porter\/config\.json \(\d+ problems?\):/);
  for (const problem of error.problems) assert.ok(error.message.includes(problem));
  return error.problems;
}

function server(executor: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  return { id: SERVER_ID, executor, ...extra };
}

describe('key paths in messages', () => {
  test('are written the way a user writes them', () => {
    assert.equal(formatKeyPath(['servers', 0, 'executor', 'port']), 'servers[0].executor.port');
    assert.equal(formatKeyPath([]), '(top level)');
    assert.equal(formatKeyPath(['api', 'odd key']), 'api["odd key"]');
  });
});

describe('schema problems', () => {
  test('a wrong type names the key and both types', async () => {
    const problems = await problemsOf(minimal({ servers: [server({ type: 'rcon', password: PASSWORD, port: '25575' })] }));
    assert.deepEqual(problems, ['servers[0].executor.port: expected a number, got a string']);
  });

  test('a number out of range says the bound', async () => {
    const problems = await problemsOf(minimal({ servers: [server({ type: 'rcon', password: PASSWORD, port: 70000 })] }));
    assert.deepEqual(problems, ['servers[0].executor.port: expected a number of at most 65535']);
  });

  test('a missing required key says it is missing', async () => {
    const problems = await problemsOf({ servers: minimal().servers });
    assert.deepEqual(problems, ['api: missing: expected an object { ... }']);
  });

  test('an unknown key is named, with a suggestion for a typo', async () => {
    const problems = await problemsOf(minimal({ servers: [server({ type: 'rcon', pasword: PASSWORD, password: PASSWORD })] }));
    assert.deepEqual(problems, ['servers[0].executor.pasword: unknown key (did you mean "password"?)']);
  });

  test('an unknown key with no close match lists the allowed keys', async () => {
    const problems = await problemsOf(minimal({ poll: { idleMs: 500, zzz: 1 } }));
    assert.deepEqual(problems, ['poll.zzz: unknown key (allowed keys here: idleMs)']);
  });

  test("unknown keys inside a script executor suggest from that executor's keys", async () => {
    const problems = await problemsOf(minimal({ servers: [server({ type: 'script', exec: ['/bin/true'], timeoutMS: 5 })] }));
    assert.deepEqual(problems, ['servers[0].executor.timeoutMS: unknown key (did you mean "timeoutMs"?)']);
  });

  test('an unknown executor type lists the known ones; a missing one says missing', async () => {
    const problems = await problemsOf(
      minimal({
        servers: [server({ type: 'ftp' }), { id: OTHER_ID, executor: { port: 1 } }],
      }),
    );
    // Every transport of the list, in its order (rcon, webrcon, script, telnet, tshock, battleye, …).
    const known = TRANSPORTS.map((transport) => `"${transport.type}"`).join(', ');
    assert.ok(known.startsWith('"rcon", "webrcon", "script"'));
    assert.deepEqual(problems, [
      `servers[0].executor.type: expected one of ${known}`,
      `servers[1].executor.type: missing: expected one of ${known}`,
    ]);
  });

  test('an enum names its allowed values', async () => {
    const problems = await problemsOf(minimal({ log: { level: 'loud' } }));
    assert.deepEqual(problems, ['log.level: expected one of "fatal", "error", "warn", "info", "debug", "trace", "silent"']);
  });

  test('players.joinGraceMs is a whole number of ms from 0 to 10 minutes, default 0 (off)', async () => {
    const withGrace = (joinGraceMs: unknown) =>
      minimal({ servers: [server({ type: 'rcon', password: PASSWORD }, { players: { preset: 'rust', joinGraceMs } })] });
    assert.deepEqual(await problemsOf(withGrace(600_001)), [
      'servers[0].players.joinGraceMs: expected at most 600000 (10 minutes): a longer grace keeps a buyer who just joined waiting that long for an online-only purchase; use 0 to turn the grace off',
    ]);
    assert.deepEqual(await problemsOf(withGrace(-1)), ['servers[0].players.joinGraceMs: expected a number of at least 0']);
    assert.deepEqual(await problemsOf(withGrace(1.5)), [
      'servers[0].players.joinGraceMs: expected a whole number, got a fractional number',
    ]);
    const config = await parseConfig(withGrace(600_000), '/srv/porter', {}, '/srv/porter/config.json');
    assert.equal(config.servers[0]!.players.joinGraceMs, 600_000);
    const plain = await parseConfig(minimal(), '/srv/porter', {}, '/srv/porter/config.json');
    assert.equal(plain.servers[0]!.players.joinGraceMs, 0);
  });

  test("the schema's own messages are kept", async () => {
    const problems = await problemsOf(minimal({ servers: [{ id: 'my-server', executor: { type: 'rcon', password: PASSWORD } }] }));
    assert.deepEqual(problems, ['servers[0].id: expected the server UUID from the store dashboard (8-4-4-4-12 hex digits)']);
  });

  test('every problem is reported at once, one line each', async () => {
    const problems = await problemsOf({
      api: { baseUrl: 'http://seller.example.com', tokn: TOKEN, budget: { share: 2 } },
      servers: [
        server({ type: 'rcon', password: PASSWORD, timeoutMs: 0 }),
        server({ type: 'script', exec: [] }, { players: { preset: 'custom' } }),
      ],
      stateDir: '',
      extra: true,
    });
    assert.deepEqual(problems, [
      'api.baseUrl: plain http:// to seller.example.com would send the API token unencrypted; use https:// (http:// is only allowed to loopback: 127.0.0.0/8, ::1, ::ffff:127.x.x.x, localhost)',
      'api.budget.share: expected a number of at most 1',
      'api.tokn: unknown key (did you mean "token"?)',
      'servers[0].executor.timeoutMs: expected a number greater than 0',
      'servers[1].executor.exec: expected at least one entry',
      'servers[1].players: preset "custom" needs both "command" and "pattern"',
      'servers[1].id: the same server id as servers[0].id; each server may appear only once',
      'stateDir: must not be empty',
      'extra: unknown key (allowed keys here: $schema, api, stores, servers, poll, stateDir, log, shutdown, agones, health, webhook, history)',
    ]);
  });

  test('a config that is not an object says what it should be', async () => {
    assert.deepEqual(await problemsOf([]), ['(top level): expected an object { ... }, got a list']);
    assert.deepEqual(await problemsOf(null), ['(top level): expected an object { ... }, got null']);
  });

  test('an empty server list is refused', async () => {
    assert.deepEqual(await problemsOf(minimal({ servers: [] })), ['servers: expected at least one server']);
  });

  test('duplicate server ids are refused, whatever their case', async () => {
    const problems = await problemsOf(
      minimal({
        servers: [
          server({ type: 'rcon', password: PASSWORD }),
          { id: SERVER_ID.toUpperCase(), executor: { type: 'rcon', password: PASSWORD } },
        ],
      }),
    );
    assert.deepEqual(problems, ['servers[1].id: the same server id as servers[0].id; each server may appear only once']);
  });

  test('a value that failed validation is never echoed', async () => {
    const secret = 'gci_do_not_print_me';
    const error = await configError(
      parseConfig(
        minimal({
          api: { baseUrl: 'https://seller.example.com', token: 12345, tokenFile: [secret] },
          servers: [server({ type: 'rcon', password: { value: secret } })],
        }),
        '/srv',
        {},
      ),
    );
    assert.ok(!error.message.includes(secret), error.message);
    assert.ok(!error.message.includes('12345'), error.message);
    assert.match(error.message, /api\.token: expected a string, got a whole number/);
    assert.match(error.message, /servers\[0\]\.executor\.password: expected a string, got an object/);
  });
});

describe('api.baseUrl', () => {
  const withUrl = (baseUrl: string) => minimal({ api: { baseUrl, token: TOKEN } });

  for (const url of ['http://seller.example.com', 'http://10.0.0.5:8080', 'http://[2001:db8::1]/', 'http://localhost.example.com']) {
    test(`plain http to a non-loopback host is refused: ${url}`, async () => {
      const problems = await problemsOf(withUrl(url));
      assert.equal(problems.length, 1);
      assert.match(problems[0] as string, /^api\.baseUrl: plain http:\/\/ .* use https:\/\//);
    });
  }

  for (const url of [
    'http://127.0.0.1:8080',
    'http://127.9.8.7',
    'http://localhost:3000/prefix',
    'http://LOCALHOST',
    'http://[::1]:8080',
    'http://[::ffff:127.0.0.1]/',
    'https://seller.example.com',
  ]) {
    test(`is accepted: ${url}`, async () => {
      const config = await parseConfig(withUrl(url), '/srv', {});
      assert.equal(config.api.baseUrl, url);
    });
  }

  test('credentials inside the URL are refused without echoing them', async () => {
    const problems = await problemsOf(withUrl('https://user:hunter22@seller.example.com'));
    assert.deepEqual(problems, [
      'api.baseUrl: must not contain a user name or password; the API token goes in api.token, api.tokenFile or PORTER_API_TOKEN',
    ]);
  });

  test("a URL that is not http(s) keeps the schema's message", async () => {
    const problems = await problemsOf(withUrl('ftp://seller.example.com'));
    assert.deepEqual(problems, ['api.baseUrl: expected an http(s) URL such as https://seller.example.com']);
  });
});
