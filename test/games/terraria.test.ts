import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { PlayerListError } from '../../src/games/errors.js';
import { gameFor } from '../../src/games/registry.js';
import { parseTShockPlayerList, terrariaGame, TSHOCK_PLAYER_LIST_ROUTE } from '../../src/games/terraria.js';
import { compileCommandPolicy } from '../../src/policy/command-policy.js';
import { compileFailurePatterns, failureIn } from '../../src/policy/failure-patterns.js';
import { fixture, scriptedQuery } from '../players/fixtures.js';

describe('parseTShockPlayerList', () => {
  test('nickname and account name of every active player; names with spaces, commas and unicode kept whole; connecting slots left out', () => {
    assert.deepEqual(parseTShockPlayerList(fixture('tshock-players-list.txt')), [
      'Bob the Builder',
      'Ann, 1st of Her Name',
      'ann',
      'Łucja ★',
      'lucja',
    ]);
  });

  test('nobody online', () => {
    assert.deepEqual(parseTShockPlayerList('{"status": "200", "players": []}'), []);
  });

  test('entries that are not players are skipped, an entry without "active" counts', () => {
    assert.deepEqual(parseTShockPlayerList('{"players": [null, 7, {"nickname": 5}, {"nickname": "Zed"}]}'), ['Zed']);
  });

  test('anything without a "players" array is not a player list', () => {
    for (const answer of ['', 'Invalid command entered.', '[]', '{"status": "200"}', '{"players": "Bob, Ann"}', 'null']) {
      assert.equal(parseTShockPlayerList(answer), null, answer);
    }
  });
});

describe('terraria game', () => {
  test('reads players from the REST route', async () => {
    const { query, asked } = scriptedQuery({ [TSHOCK_PLAYER_LIST_ROUTE]: fixture('tshock-players-list.txt') });
    assert.equal((await terrariaGame.readPlayers(query)).length, 5);
    assert.deepEqual(asked, ['/v2/players/list']);
  });

  test('an answer that is no player list is a PlayerListError naming the game', async () => {
    const { query } = scriptedQuery({ [TSHOCK_PLAYER_LIST_ROUTE]: '<html>502 Bad Gateway</html>' });
    await assert.rejects(
      terrariaGame.readPlayers(query),
      (error: unknown) => error instanceof PlayerListError && /terraria/.test(error.message),
    );
  });

  test("TShock's failure answers fail the delivery; a give that worked and a silent broadcast do not", () => {
    const patterns = compileFailurePatterns(gameFor({ preset: 'terraria' }));
    // Texts of TShockAPI/Commands.cs and TSPlayer.SendMultipleMatchError.
    for (const answer of [
      'Invalid command entered. Type /help for a list of valid commands.',
      'You entered a space after / instead of a command. Type /help for a list of valid commands.',
      'You do not have access to this command.',
      'You must use this command in-game.',
      'Invalid player!',
      'Invalid item type!',
      'Invalid syntax. Proper syntax: /give <item type/id> <player> [item amount] [prefix id/name]',
      'More than one match found -- unable to decide which is correct: \nBob, Bobby\nUse "my query" for items with spaces.',
      'Player does not have free slots!',
      'You cannot spawn banned items.',
      'Missing player name.',
      'Could not find any player named "Ghost"',
    ]) {
      assert.ok(failureIn(answer, patterns), answer);
    }
    for (const answer of ['Gave Bob the Builder 1 Terra Blade.', 'Gave Ann 99 Healing Potions.', '']) {
      assert.equal(failureIn(answer, patterns), null, answer);
    }
  });

  test('the default deny list refuses what no purchase needs, with or without the slash, and lets deliveries through', () => {
    const policy = compileCommandPolicy(gameFor({ preset: 'terraria' }));
    for (const command of [
      '/off',
      'off',
      '/exit-nosave',
      '/stop',
      '/user group ann superadmin',
      '/group addperm guest *',
      '/sudo /off',
      '/su',
      '/tempgroup "Bob" superadmin',
      '/serverpassword letmein',
      '/whitelist off',
      '/rest destroytokens',
      '/ban add "Ann"',
    ]) {
      assert.equal(policy.check(command).ok, false, command);
    }
    for (const command of ['/give "Terra Blade" "Bob the Builder" 1', 'give 29 ann 5', '/say Thanks, Bob!', '/buffplayer Bob regen 60']) {
      assert.equal(policy.check(command).ok, true, command);
    }
  });
});
