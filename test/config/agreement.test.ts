import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { createApiClient } from '../../src/api/wire/client.js';
import { parseBaseUrl } from '../../src/api/wire/routes.js';
import { systemClock } from '../../src/clock.js';
import { ConfigInvalidError } from '../../src/config/errors.js';
import { parseConfig } from '../../src/config/load.js';
import { isLoopbackHost } from '../../src/config/loopback.js';
import type { Config } from '../../src/config/schema.js';
import { buildServer } from '../../src/daemon/build-server.js';
import { Budget } from '../../src/api/budget/budget.js';
import { Journal } from '../../src/delivery/journal/journal.js';
import { parseListen } from '../../src/health/listen.js';
import { configError, minimal, PASSWORD, TOKEN } from './helpers.js';

/**
 * `Porter check` and `porter run` agree on every config. Both load it through the
 * one zod schema, so the question is whether the schema refuses everything the run-time parts
 * refuse when porter assembles itself, and refuses nothing they accept. Each row is a config: a
 * refused one must name its key path; an accepted one must also survive the assembly `porter run`
 * does at start (API client, health address, every server's executor, preset, policy, patterns,
 * budget).
 */

const logger = pino({ level: 'silent' });

/** What runDaemon builds before it pulls anything; throws what `porter run` would exit 78 with. */
async function assembleAsRunDoes(config: Config): Promise<void> {
  const stateDir = mkdtempSync(join(tmpdir(), 'porter-agreement-'));
  const client = createApiClient(config.api, { logger });
  try {
    if (config.health) parseListen(config.health.listen);
    const journal = new Journal(stateDir);
    const parts = await Promise.all(
      config.servers.map((server) =>
        buildServer(server, {
          client,
          budget: new Budget(config.api.budget, systemClock),
          pollIdleMs: config.poll.idleMs,
          journal,
          clock: systemClock,
          logger,
          scrub: (text) => text,
        }),
      ),
    );
    await Promise.all(parts.map((part) => part.executor.close()));
  } finally {
    await client.close();
    rmSync(stateDir, { recursive: true, force: true });
  }
}

/** A config as written in the file: the rows set any key to anything, valid or not. */
interface RawConfig {
  api: Record<string, unknown>;
  health?: unknown;
  servers: Array<Record<string, unknown>>;
}

type Edit = (config: RawConfig) => void;

const server = (config: RawConfig) => config.servers[0]!;

const refused: Array<[string, Edit, string]> = [
  ['a deny regex that does not compile', (c) => (server(c).commandPolicy = { deny: ['/[unclosed/'] }), 'servers[0].commandPolicy.deny[0]'],
  [
    'an allow regex that does not compile',
    (c) => (server(c).commandPolicy = { allow: ['say', '/(?<x/'] }),
    'servers[0].commandPolicy.allow[1]',
  ],
  ['a root-command rule of only blanks', (c) => (server(c).commandPolicy = { deny: ['   '] }), 'servers[0].commandPolicy.deny[0]'],
  ['a rule that is only a slash', (c) => (server(c).commandPolicy = { allow: ['/'] }), 'servers[0].commandPolicy.allow[0]'],
  ['health.listen on a port above 65535', (c) => (c.health = { listen: '127.0.0.1:99999' }), 'health.listen'],
  ['health.listen on an IPv6 port above 65535', (c) => (c.health = { listen: '[::1]:65536' }), 'health.listen'],
  ['health.listen without a port', (c) => (c.health = { listen: '127.0.0.1' }), 'health.listen'],
  ['plain http to a private address', (c) => (c.api.baseUrl = 'http://192.168.1.5:8080'), 'api.baseUrl'],
  ['plain http to a mapped address outside 127/8', (c) => (c.api.baseUrl = 'http://[::ffff:10.0.0.1]'), 'api.baseUrl'],
  ['a budget share that allows no call', (c) => (c.api.budget = { share: 0 }), 'api.budget'],
  ['a perWindow × share below one call', (c) => (c.api.budget = { perWindow: 1, share: 0.5 }), 'api.budget'],
  ['a pull route with {id}', (c) => (c.api.routes = { pull: '/p/{serverId}/{id}' }), 'api.routes.pull'],
  [
    'a WebRCON host no URL can carry',
    (c) => (server(c).executor = { type: 'webrcon', host: 'two words', password: PASSWORD }),
    'servers[0].executor.host',
  ],
  ['a failure pattern that does not compile', (c) => (server(c).failurePatterns = ['(unclosed']), 'servers[0].failurePatterns[0]'],
  [
    'a custom player pattern without (?<id>)',
    (c) => (server(c).players = { preset: 'custom', command: 'who', pattern: '(\\w+)' }),
    'servers[0].players.pattern',
  ],
];

const accepted: Array<[string, Edit]> = [
  ['plain http to an IPv4-mapped loopback address', (c) => (c.api.baseUrl = 'http://[::ffff:127.0.0.1]:8080')],
  ['plain http to 127.1 (127.0.0.1 in short)', (c) => (c.api.baseUrl = 'http://127.1')],
  ['plain http to [::1] and a path prefix', (c) => (c.api.baseUrl = 'http://[::1]:3000/store/')],
  ['plain http to localhost', (c) => (c.api.baseUrl = 'http://localhost:3000')],
  ['health.listen on a mapped loopback address', (c) => (c.health = { listen: '[::ffff:127.0.0.1]:9464' })],
  ['health.listen on port 0 (any free port)', (c) => (c.health = { listen: '127.0.0.1:0' })],
  ['health.listen on the highest port', (c) => (c.health = { listen: '[::1]:65535' })],
  ['health.listen on every interface', (c) => (c.health = { listen: '0.0.0.0:9464' })],
  [
    'regex and root rules in both lists',
    (c) => (server(c).commandPolicy = { deny: ['/^op\\b/i', 'whitelist off'], allow: ['/^give \\w+/', 'say'] }),
  ],
  ['a regex rule with g and y flags (dropped)', (c) => (server(c).commandPolicy = { deny: ['/stop/gy'] })],
  ['the smallest budget that allows a call', (c) => (c.api.budget = { perWindow: 2, share: 0.5 })],
  ['custom routes', (c) => (c.api.routes = { pull: '/p/{serverId}', done: '/d/{serverId}/{id}', fail: '/f/{id}' })],
  ['a WebRCON executor on an IPv6 host', (c) => (server(c).executor = { type: 'webrcon', host: '::1', password: PASSWORD })],
  ['a script executor', (c) => (server(c).executor = { type: 'script', exec: ['/bin/true'] })],
  ['failure patterns in replace mode', (c) => (server(c).failurePatterns = { mode: 'replace', patterns: ['^Error'] })],
];

function configWith(edit: Edit): RawConfig {
  const config = minimal() as unknown as RawConfig;
  edit(config);
  return config;
}

describe('porter check and porter run agree on a config', () => {
  for (const [name, edit, key] of refused) {
    test(`both refuse, naming ${key}: ${name}`, async () => {
      const error = await configError(parseConfig(configWith(edit), '/srv/porter', {}, '/srv/porter/config.json'));
      assert.ok(error instanceof ConfigInvalidError);
      assert.equal(error.problems.length, 1, error.message);
      assert.ok(error.problems[0]!.startsWith(`${key}: `), error.message);
    });
  }

  for (const [name, edit] of accepted) {
    test(`both accept: ${name}`, async () => {
      const config = await parseConfig(configWith(edit), '/srv/porter', {});
      await assembleAsRunDoes(config);
    });
  }
});

describe('one definition of loopback', () => {
  const loopback = [
    '127.0.0.1',
    '127.255.0.9',
    '127.1',
    'localhost',
    'LOCALHOST',
    '::1',
    '[::1]',
    '0:0:0:0:0:0:0:1',
    '::ffff:127.0.0.1',
    '[::ffff:7f00:1]',
    '::FFFF:127.3.2.1',
  ];
  const network = [
    '0.0.0.0',
    '::',
    '[::]',
    '10.0.0.1',
    '128.0.0.1',
    '::ffff:10.0.0.1',
    '::2',
    'localhost.example.com',
    'example.com',
    '',
    'not a host',
  ];

  for (const host of loopback) {
    test(`loopback: ${host}`, () => assert.equal(isLoopbackHost(host), true));
  }
  for (const host of network) {
    test(`not loopback: ${JSON.stringify(host)}`, () => assert.equal(isLoopbackHost(host), false));
  }

  test('the schema and the API client accept and refuse the same base URLs', async () => {
    const urls = [
      ...loopback
        .filter((host) => host !== '')
        .map((host) => `http://${host.includes(':') && !host.startsWith('[') ? `[${host}]` : host}:8080`),
      ...network
        .filter((host) => !['', 'not a host', '::', '[::]'].includes(host))
        .map((host) => `http://${host.includes(':') && !host.startsWith('[') ? `[${host}]` : host}`),
      'https://seller.example.com',
      'http://user:pw@127.0.0.1',
      'https://seller.example.com/?x=1',
    ];
    for (const url of urls) {
      const schema = await parseConfig(minimal({ api: { baseUrl: url, token: TOKEN } }), '/srv', {}).then(
        () => true,
        () => false,
      );
      const client = (() => {
        try {
          parseBaseUrl(url);
          return true;
        } catch {
          return false;
        }
      })();
      assert.equal(client, schema, `${url}: the config schema says ${schema ? 'yes' : 'no'}, the API client ${client ? 'yes' : 'no'}`);
    }
  });

  test('the schema and the health server accept and refuse the same listen addresses', async () => {
    const addresses = [
      '127.0.0.1:9464',
      '[::1]:0',
      'localhost:80',
      '[::ffff:127.0.0.1]:1',
      '0.0.0.0:65535',
      '127.0.0.1:65536',
      '9464',
      ':9464',
      '::1:9464',
      'host:port',
      '[::1]',
      '1.2.3.4:123456',
    ];
    for (const listen of addresses) {
      const schema = await parseConfig(minimal({ health: { listen } }), '/srv', {}).then(
        () => true,
        () => false,
      );
      const server = (() => {
        try {
          parseListen(listen);
          return true;
        } catch {
          return false;
        }
      })();
      assert.equal(
        server,
        schema,
        `${listen}: the config schema says ${schema ? 'yes' : 'no'}, the health server ${server ? 'yes' : 'no'}`,
      );
    }
  });
});
