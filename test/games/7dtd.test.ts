import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { PlayerListError } from '../../src/games/errors.js';
import { gameFor } from '../../src/games/registry.js';
import { parseSevenDaysPlayers, sevenDaysGame } from '../../src/games/7dtd.js';
import { normalizeIdentifiers } from '../../src/players/normalize.js';
import { compileCommandPolicy } from '../../src/policy/command-policy.js';
import { compileFailurePatterns, failureIn } from '../../src/policy/failure-patterns.js';
import { fixture, scriptedQuery } from '../players/fixtures.js';

describe('parseSevenDaysPlayers', () => {
  test('name, SteamID64 (Steam_ removed) and EOS id of every row; the echo log line ignored', () => {
    assert.deepEqual(parseSevenDaysPlayers(fixture('7dtd-listplayers.txt')), [
      'PlayerA',
      '76561198012345678',
      'EOS_0002a1b2c3d4e5f60718293a4b5c6d7e',
      'PlayerB',
      '76561198087654321',
      'EOS_00029f8e7d6c5b4a39281706f5e4d3c2',
    ]);
  });

  test('names with spaces, commas and ", pos=(" are read whole; other platforms kept as printed; <unknown> skipped', () => {
    assert.deepEqual(parseSevenDaysPlayers(fixture('7dtd-listplayers-odd-names.txt')), [
      'Bob, the Builder',
      '76561198000000001',
      'EOS_000000000000000000000000000000aa',
      'x, pos=(1, 2, 3), y',
      'XBL_2535405290123456',
      'EOS_000000000000000000000000000000bb',
      'Ghost Leaving',
    ]);
  });

  test('older servers: steamid= instead of pltfmid and crossid', () => {
    assert.deepEqual(parseSevenDaysPlayers(fixture('7dtd-listplayers-legacy.txt')), ['Old Timer', '76561198010715714']);
  });

  test('nobody online', () => {
    assert.deepEqual(parseSevenDaysPlayers(fixture('7dtd-listplayers-empty.txt')), []);
  });

  test('without the "Total of" line it is not a player list', () => {
    assert.equal(parseSevenDaysPlayers("*** ERROR: unknown command 'listplayers'"), null);
    assert.equal(parseSevenDaysPlayers('0. id=1, a, pos=(1, 2, 3), rot=(0, 0, 0)'), null);
  });

  test("identifiers go out lowercased like every game's", () => {
    assert.deepEqual(normalizeIdentifiers(parseSevenDaysPlayers(fixture('7dtd-listplayers.txt'))!).ids.slice(0, 3), [
      'playera',
      '76561198012345678',
      'eos_0002a1b2c3d4e5f60718293a4b5c6d7e',
    ]);
  });
});

describe('7dtd game', () => {
  test('is the default for the telnet executor and reads players with listplayers', async () => {
    assert.equal(gameFor({ preset: '7dtd' }), sevenDaysGame);
    const { query, asked } = scriptedQuery({ listplayers: fixture('7dtd-listplayers-empty.txt') });
    assert.deepEqual(await sevenDaysGame.readPlayers(query), []);
    assert.deepEqual(asked, ['listplayers']);
  });

  test('an answer that is no player list is a PlayerListError naming the game', async () => {
    const { query } = scriptedQuery({ listplayers: "*** ERROR: Command 'listplayers' can only be executed when a game is started." });
    await assert.rejects(
      sevenDaysGame.readPlayers(query),
      (error: unknown) => error instanceof PlayerListError && /7dtd/.test(error.message),
    );
  });

  test("the console's failure answers fail the delivery; successes do not", () => {
    const patterns = compileFailurePatterns(gameFor({ preset: '7dtd' }));
    for (const answer of [
      "*** ERROR: unknown command 'gve'",
      "*** ERROR: Executing command 'give' failed: Object reference not set to an instance of an object",
      '*** ERROR: Quotation started at position 5 was not closed',
      'Playername or entity id not found.',
      'Playername or entity ID not found.',
      'Item not found.',
      'Wrong number of arguments, expected 3 or 4, found 2.',
      'Amount is not an integer or not greater than zero.',
      'xp amount must be a number.',
    ]) {
      assert.ok(failureIn(answer, patterns), answer);
    }
    for (const answer of ['Dropped item', '', 'Day 7, 21:42']) assert.equal(failureIn(answer, patterns), null, answer);
  });

  test('the default deny list refuses what no purchase needs, and lets deliveries through', () => {
    const policy = compileCommandPolicy(gameFor({ preset: '7dtd' }));
    for (const command of [
      'shutdown',
      'kickall "restart"',
      'killall',
      'admin add Steam_76561198000000001 0',
      'cp add give 1000',
      'commandpermission add give 1000',
      'webpermission add webapi.give 1000',
      'webtokens add mallory secret 0',
      'sg TelnetPassword x',
      'setgamepref ServerMaxPlayerCount 1',
      'sgs BloodMoonDay 1',
      'ban add Steam_76561198000000001 10 years',
      'SHUTDOWN',
    ]) {
      assert.equal(policy.check(command).ok, false, command);
    }
    for (const command of [
      'give "Alice Smith" casinoCoin 100',
      'givexp 171 5000',
      'say "Thanks for your purchase, Alice!"',
      'ban remove Steam_76561198000000001',
      'saveworld',
      'whitelist add Steam_76561198000000001',
    ]) {
      assert.equal(policy.check(command).ok, true, command);
    }
  });
});
