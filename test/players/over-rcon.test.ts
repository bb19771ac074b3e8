import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { systemClock } from '../../src/clock.js';
import { RconExecutor } from '../../src/protocols/rcon/executor.js';
import { PlayerCache } from '../../src/players/cache.js';
import { gameFor } from '../../src/games/registry.js';
import { compileFailurePatterns, failureIn } from '../../src/policy/failure-patterns.js';
import { fakeSteamId64 } from '../../src/sim/rcon-players.js';
import { startRconServer, type FakeRconServer } from '../../src/sim/rcon-server.js';
import { waitFor } from '../helpers/wait-for.js';
import { PASSWORD, executorConfig, silent } from '../protocols/rcon/helpers/setup.js';

/**
 * The presets, the cache and the failure patterns against the simulated game servers over real
 * RCON on 127.0.0.1: what the delivery loop will do with them, minus the loop.
 */

const context = { id: '42', serverId: '1b4e28ba-2fa1-11d2-883f-0016d3cca427' };

function executorFor(server: FakeRconServer): RconExecutor {
  return new RconExecutor(executorConfig(server), { logger: silent, backoff: { initialMs: 20, maxMs: 200 } });
}

describe('Minecraft preset over RCON', () => {
  let server: FakeRconServer;
  let executor: RconExecutor;
  before(async () => {
    server = await startRconServer({ password: PASSWORD, flavour: 'minecraft', players: ['Steve', 'Alex_99'] });
    executor = executorFor(server);
    await executor.connect();
  });
  after(async () => {
    await executor.close();
    await server.close();
  });

  test('reads account names with list uuids', async () => {
    const preset = gameFor({ preset: 'minecraft' });
    const before = server.executed.length;
    assert.deepEqual(await preset.readPlayers((command) => executor.query(command)), ['Steve', 'Alex_99']);
    assert.deepEqual(
      server.executed.slice(before).map((entry) => [entry.command, entry.query]),
      [['list uuids', true]],
    );
  });

  test("a delivery to an offline player fails with the game's answer as the reason", async () => {
    const patterns = compileFailurePatterns(gameFor({ preset: 'minecraft' }));
    const offline = await executor.execute('give Herobrine diamond 1', context);
    assert.equal(failureIn(offline, patterns), 'No player was found');
    const online = await executor.execute('give Steve diamond 1', context);
    assert.equal(failureIn(online, patterns), null);
    const typo = await executor.execute('giv Steve diamond 1', context);
    assert.match(failureIn(typo, patterns) ?? '', /^Unknown or incomplete command/);
  });

  test('the watcher notices a player who joins and says who', async () => {
    const preset = gameFor({ preset: 'minecraft' });
    const joins: string[][] = [];
    const cache = new PlayerCache({
      read: (signal) => preset.readPlayers((command) => executor.query(command, signal)),
      refreshMs: 20,
      clock: systemClock,
      logger: silent,
      onJoin: (ids) => joins.push(ids),
    });
    const stop = new AbortController();
    try {
      cache.startWatching(stop.signal);
      await waitFor(async () => (await cache.get()).length === 2, { what: 'the first list' });
      server.join('Notch');
      await waitFor(() => joins.length > 0, { what: 'the join to be noticed' });
      assert.deepEqual(joins, [['notch']]);
      assert.deepEqual(await cache.get(), ['steve', 'alex_99', 'notch']);
    } finally {
      stop.abort();
      server.leave('Notch');
    }
  });
});

describe('Source preset over RCON', () => {
  let server: FakeRconServer;
  let executor: RconExecutor;
  before(async () => {
    server = await startRconServer({ password: PASSWORD, flavour: 'source', players: ['Alice', 'Bob The Builder'] });
    executor = executorFor(server);
    await executor.connect();
  });
  after(async () => {
    await executor.close();
    await server.close();
  });

  test('reads SteamID64s from status', async () => {
    const preset = gameFor({ preset: 'source' });
    assert.deepEqual(await preset.readPlayers((command) => executor.query(command)), [
      fakeSteamId64('Alice'),
      fakeSteamId64('Bob The Builder'),
    ]);
  });

  test("srcds's answer to an unknown command is a failure", async () => {
    const patterns = compileFailurePatterns(gameFor({ preset: 'source' }));
    const answer = await executor.execute('givecredits Alice 100', context);
    assert.equal(failureIn(answer, patterns), 'Unknown command "givecredits"');
  });
});

describe('Palworld preset over RCON (every answer with id 0)', () => {
  let server: FakeRconServer;
  let executor: RconExecutor;
  before(async () => {
    server = await startRconServer({ password: PASSWORD, flavour: 'id0', players: ['Kupie', 'DarkPoney'] });
    executor = executorFor(server);
    await executor.connect();
  });
  after(async () => {
    await executor.close();
    await server.close();
  });

  test('reads the steamid column of ShowPlayers', async () => {
    const preset = gameFor({ preset: 'palworld' });
    assert.deepEqual(await preset.readPlayers((command) => executor.query(command)), [fakeSteamId64('Kupie'), fakeSteamId64('DarkPoney')]);
  });
});
