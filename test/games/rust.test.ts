import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { PlayerListError } from '../../src/games/errors.js';
import { parseRustPlayerList, rustGame } from '../../src/games/rust.js';
import { fixture, scriptedQuery } from '../players/fixtures.js';

describe('parseRustPlayerList', () => {
  test('the Message array: SteamIDs as sent', () => {
    assert.deepEqual(parseRustPlayerList(fixture('rust-playerlist.txt')), ['76561198135242017']);
  });

  test('the whole reply envelope, whose Message is a JSON string', () => {
    assert.deepEqual(parseRustPlayerList(fixture('rust-playerlist-envelope-empty.txt')), []);
    const envelope = JSON.stringify({ Message: fixture('rust-playerlist.txt'), Identifier: 7, Type: 'Generic', Stacktrace: '' });
    assert.deepEqual(parseRustPlayerList(envelope), ['76561198135242017']);
  });

  test('SteamIDs that are not digit strings are skipped (a number would have lost digits)', () => {
    assert.deepEqual(parseRustPlayerList('[{"SteamID": 76561198135242017}, {"SteamID": "76561198135242018"}, null, {}]'), [
      '76561198135242018',
    ]);
  });

  test('text that is not JSON, or not an array, is not a player list', () => {
    assert.equal(parseRustPlayerList('Command not found'), null);
    assert.equal(parseRustPlayerList('{"Message": "not json"}'), null);
    assert.equal(parseRustPlayerList('{"a": 1}'), null);
  });
});

describe('rust preset', () => {
  test('sends playerlist', async () => {
    const { query, asked } = scriptedQuery({ playerlist: fixture('rust-playerlist.txt') });
    assert.deepEqual(await rustGame.readPlayers(query), ['76561198135242017']);
    assert.deepEqual(asked, ['playerlist']);
  });

  test('an unknown answer is a PlayerListError', async () => {
    const { query } = scriptedQuery({ playerlist: 'nope' });
    await assert.rejects(rustGame.readPlayers(query), PlayerListError);
  });
});
