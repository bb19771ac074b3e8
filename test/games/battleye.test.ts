import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { battleyeGuid } from '../../src/games/battleye-guid.js';
import { battleyeIdentifiers, parseBattlEyePlayers } from '../../src/games/battleye-players.js';
import { PlayerListError } from '../../src/games/errors.js';
import { gameFor } from '../../src/games/registry.js';
import { normalizeIdentifiers } from '../../src/players/normalize.js';
import { compileCommandPolicy } from '../../src/policy/command-policy.js';
import { compileFailurePatterns, failureIn } from '../../src/policy/failure-patterns.js';
import { BattlEyeRoster } from '../../src/sim/battleye-roster.js';
import { fixture, scriptedQuery } from '../players/fixtures.js';

describe('battleyeGuid', () => {
  test('MD5 of "BE" and the SteamID64 as 8 little-endian bytes (the vector from battleyephp/guid’s tests)', () => {
    assert.equal(battleyeGuid('76561198066209976'), 'a0d1158281d8639495a1908b5a802470');
  });

  test('anything that is not a 64-bit decimal number has no GUID', () => {
    for (const id of ['', 'STEAM_0:1:1', '7656119806620997x', '18446744073709551616', '-1']) assert.equal(battleyeGuid(id), undefined, id);
    assert.equal(battleyeGuid('18446744073709551615')?.length, 32);
  });
});

describe('parseBattlEyePlayers', () => {
  test('every row exactly: names with spaces, commas and brackets, lobby players, (OK) and (?), a player still joining', () => {
    assert.deepEqual(parseBattlEyePlayers(fixture('battleye-players.txt')), [
      { slot: 0, name: 'Player Name', guid: 'a0d1158281d8639495a1908b5a802470', verified: true, lobby: true },
      { slot: 1, name: 'Smith, John', guid: '04b81a0bd914e7ba610ef31234567890', verified: false, lobby: false },
      { slot: 2, name: 'Joining', guid: undefined, verified: false, lobby: true },
      { slot: 3, name: '[TAG] Bravo 17 (the 2nd)', guid: '80a5885ebe2420bab5e1581234567890', verified: true, lobby: false },
    ]);
  });

  test('the identifiers: each name and each GUID, as porter sends them', () => {
    const players = parseBattlEyePlayers(fixture('battleye-players.txt'))!;
    assert.deepEqual(normalizeIdentifiers(battleyeIdentifiers(players)).ids, [
      'player name',
      'a0d1158281d8639495a1908b5a802470',
      'smith, john',
      '04b81a0bd914e7ba610ef31234567890',
      'joining',
      '[tag] bravo 17 (the 2nd)',
      '80a5885ebe2420bab5e1581234567890',
    ]);
  });

  test('nobody online; CRLF line ends', () => {
    assert.deepEqual(parseBattlEyePlayers(fixture('battleye-players-empty.txt')), []);
    assert.deepEqual(parseBattlEyePlayers(fixture('battleye-players.txt').replace(/\n/g, '\r\n'))?.length, 4);
  });

  test('without the header it is not a player list', () => {
    assert.equal(parseBattlEyePlayers('Unknown command'), null);
    assert.equal(parseBattlEyePlayers(''), null);
  });

  test('the simulator’s table reads back as the players it holds (names, lobby, GUID from the SteamID64)', () => {
    const roster = new BattlEyeRoster([
      { name: 'Player Name', steamId64: '76561198066209976', lobby: true },
      { name: 'Smith, John', unverified: true },
      { name: 'New Guy', joining: true },
    ]);
    const players = parseBattlEyePlayers(roster.table())!;
    assert.deepEqual(
      players.map((player) => [player.name, player.lobby, player.verified]),
      [
        ['Player Name', true, true],
        ['Smith, John', false, false],
        ['New Guy', true, false],
      ],
    );
    assert.equal(players[0]!.guid, 'a0d1158281d8639495a1908b5a802470');
    assert.equal(players[2]!.guid, undefined);
  });
});

for (const preset of ['dayz', 'arma3'] as const) {
  describe(`${preset} game`, () => {
    test('reads players with `players`, names and GUIDs', async () => {
      const { query, asked } = scriptedQuery({ players: fixture('battleye-players.txt') });
      const ids = await gameFor({ preset }).readPlayers(query);
      assert.deepEqual(asked, ['players']);
      assert.ok(ids.includes('Smith, John') && ids.includes('a0d1158281d8639495a1908b5a802470'));
      assert.equal(ids.length, 7);
    });

    test('an answer that is no player list is a PlayerListError naming the game', async () => {
      const { query } = scriptedQuery({ players: 'Unknown command' });
      await assert.rejects(
        gameFor({ preset }).readPlayers(query),
        (error: unknown) => error instanceof PlayerListError && error.message.includes(preset),
      );
    });

    test('BattlEye’s failure answers fail the delivery; an empty answer does not', () => {
      const patterns = compileFailurePatterns(gameFor({ preset }));
      for (const answer of ['Invalid ban format', 'Unknown command']) assert.ok(failureIn(answer, patterns), answer);
      assert.equal(failureIn('', patterns), null);
    });

    test('the default deny list refuses what no purchase needs, and lets deliveries through', () => {
      const policy = compileCommandPolicy(gameFor({ preset }));
      for (const command of [
        '#shutdown',
        ' #SHUTDOWN 60',
        '#lock',
        '#exec ban 1',
        'loadBans',
        'writeBans',
        'MaxPing 10',
        'ban 1',
        'addBan 1.2.3.4',
      ]) {
        assert.equal(policy.check(command).ok, false, command);
      }
      for (const command of ['say -1 Thanks for supporting the server!', 'kick 3 relog for your kit', '#unlock']) {
        assert.equal(policy.check(command).ok, true, command);
      }
    });
  });
}

test('arma3 also denies ending the mission for everyone; dayz does not know those commands', () => {
  const arma = compileCommandPolicy(gameFor({ preset: 'arma3' }));
  const dayz = compileCommandPolicy(gameFor({ preset: 'dayz' }));
  for (const command of ['#restartserver', '#shutdownserver', '#missions', '#reassign']) {
    assert.equal(arma.check(command).ok, false, command);
    assert.equal(dayz.check(command).ok, true, command);
  }
});
