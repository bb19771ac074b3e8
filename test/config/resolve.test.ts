import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { parseConfig } from '../../src/config/load.js';
import type { ResolvedServer } from '../../src/config/schema.js';
import { minimal, PASSWORD, SERVER_ID, TOKEN } from './helpers.js';

const BASE = '/etc/porter';

async function onlyServer(serverExtra: Record<string, unknown>): Promise<ResolvedServer> {
  const config = await parseConfig(minimal({ servers: [{ id: SERVER_ID, ...serverExtra }] }), BASE, {});
  assert.equal(config.servers.length, 1);
  return config.servers[0] as ResolvedServer;
}

describe('relative paths', () => {
  test("stateDir resolves against the config file's folder; an absolute one is kept", async () => {
    assert.equal((await parseConfig(minimal(), BASE, {})).stateDir, '/etc/porter/state');
    assert.equal((await parseConfig(minimal({ stateDir: '../var/porter' }), BASE, {})).stateDir, '/etc/var/porter');
    assert.equal((await parseConfig(minimal({ stateDir: '/var/lib/porter' }), BASE, {})).stateDir, '/var/lib/porter');
  });

  test('a script path with a slash resolves against the config folder; a bare name is left for PATH', async () => {
    const relative = await onlyServer({ executor: { type: 'script', exec: ['bin/deliver', '--dry', 'x/y'] } });
    assert.deepEqual(relative.executor.type === 'script' && relative.executor.exec, ['/etc/porter/bin/deliver', '--dry', 'x/y']);
    const bare = await onlyServer({ executor: { type: 'script', exec: ['deliver.sh'] } });
    assert.deepEqual(bare.executor.type === 'script' && bare.executor.exec, ['deliver.sh']);
    const absolute = await onlyServer({ executor: { type: 'script', exec: ['/usr/local/bin/deliver'] } });
    assert.deepEqual(absolute.executor.type === 'script' && absolute.executor.exec, ['/usr/local/bin/deliver']);
  });

  test('players.exec resolves the same way', async () => {
    const server = await onlyServer({ executor: { type: 'script', exec: ['./deliver'] }, players: { exec: ['./who', 'online'] } });
    assert.deepEqual(server.players.exec, ['/etc/porter/who', 'online']);
    const bare = await onlyServer({ executor: { type: 'rcon', password: PASSWORD }, players: { exec: ['who'] } });
    assert.deepEqual(bare.players.exec, ['who']);
  });
});

describe('defaults', () => {
  test('a minimal config gets every default filled', async () => {
    const config = await parseConfig(minimal(), BASE, {}, '/etc/porter/config.json');
    assert.equal(config.configPath, '/etc/porter/config.json');
    assert.deepEqual(config.api, {
      baseUrl: 'https://seller.example.com',
      token: TOKEN,
      timeoutMs: 10000,
      budget: { perWindow: 120, windowMs: 60000, share: 1 },
      routes: {
        pull: '/v1/seller/servers/{serverId}/commands/pull',
        done: '/v1/seller/servers/{serverId}/commands/{id}/done',
        fail: '/v1/seller/servers/{serverId}/commands/{id}/fail',
      },
    });
    assert.deepEqual(config.poll, { idleMs: 1000 });
    assert.deepEqual(config.log, { level: 'info' });
    assert.deepEqual(config.shutdown, { drainMs: 10000 });
    assert.deepEqual(config.servers[0], {
      id: SERVER_ID,
      notSentRetryMs: 20000,
      executor: {
        type: 'rcon',
        host: '127.0.0.1',
        port: 25575,
        password: PASSWORD,
        timeoutMs: 5000,
        connectTimeoutMs: 5000,
        maxRequestBytes: 1446,
        flavour: 'minecraft',
      },
      players: { preset: 'minecraft', refreshMs: 2000, joinGraceMs: 0 },
    });
  });

  const presetCases: [string, Record<string, unknown>, Record<string, unknown> | undefined, string][] = [
    ['rcon without players', { type: 'rcon', password: PASSWORD }, undefined, 'minecraft'],
    ['rcon with players but no preset', { type: 'rcon', password: PASSWORD }, { refreshMs: 500 }, 'minecraft'],
    ['webrcon', { type: 'webrcon', password: PASSWORD }, undefined, 'rust'],
    ['telnet', { type: 'telnet', password: PASSWORD }, undefined, '7dtd'],
    ['tshock', { type: 'tshock', password: PASSWORD }, undefined, 'terraria'],
    ['script', { type: 'script', exec: ['/bin/true'] }, undefined, 'none'],
    ['script with players.exec', { type: 'script', exec: ['/bin/true'] }, { exec: ['/bin/who'] }, 'none'],
    ['an explicit preset', { type: 'rcon', password: PASSWORD }, { preset: 'ark' }, 'ark'],
  ];
  for (const [name, executor, players, preset] of presetCases) {
    test(`players preset for ${name}: ${preset}`, async () => {
      const server = await onlyServer({ executor, ...(players && { players }) });
      assert.equal(server.players.preset, preset);
      assert.equal(server.players.refreshMs, (players?.refreshMs as number | undefined) ?? 2000);
    });
  }

  test("a telnet executor gets port 8081 and the password resolved like RCON's", async () => {
    const server = await onlyServer({ executor: { type: 'telnet', password: PASSWORD } });
    assert.deepEqual(server.executor, {
      type: 'telnet',
      host: '127.0.0.1',
      port: 8081,
      password: PASSWORD,
      timeoutMs: 5000,
      connectTimeoutMs: 5000,
    });
  });

  const flavourCases: [string | undefined, string | undefined, string][] = [
    [undefined, undefined, 'minecraft'],
    ['minecraft', undefined, 'minecraft'],
    ['palworld', undefined, 'id0'],
    ['ark', undefined, 'source'],
    ['source', undefined, 'source'],
    ['custom', undefined, 'source'],
    ['minecraft', 'source', 'source'],
    ['palworld', 'source', 'source'],
  ];
  for (const [preset, flavour, expected] of flavourCases) {
    test(`rcon flavour for preset ${preset ?? '(default)'} and flavour ${flavour ?? '(default)'}: ${expected}`, async () => {
      const players = preset === 'custom' ? { preset, command: 'who', pattern: '(?<id>\\w+)' } : preset ? { preset } : undefined;
      const server = await onlyServer({
        executor: { type: 'rcon', password: PASSWORD, ...(flavour && { flavour }) },
        ...(players && { players }),
      });
      assert.equal(server.executor.type === 'rcon' && server.executor.flavour, expected);
    });
  }
});
