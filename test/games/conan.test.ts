import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { PlayerListError } from '../../src/games/errors.js';
import { conanGame, parseConanListPlayers } from '../../src/games/conan.js';
import { fixture, scriptedQuery } from '../players/fixtures.js';

describe('parseConanListPlayers', () => {
  test('live table: the Platform ID', () => {
    assert.deepEqual(parseConanListPlayers(fixture('conan-listplayers.txt')), ['76561198000735875']);
  });

  test('header only: nobody online', () => {
    assert.deepEqual(parseConanListPlayers(fixture('conan-listplayers-empty.txt')), []);
  });

  test('a "|" inside a character name does not shift the Platform ID', () => {
    assert.deepEqual(parseConanListPlayers(fixture('conan-listplayers-pipes.txt')), [
      '76561198000735875',
      '76561198000000001',
      '76561198000000002',
    ]);
  });

  test('without the table header it is not a player list', () => {
    assert.equal(parseConanListPlayers("Couldn't find the command: listplayer"), null);
  });
});

describe('conan preset', () => {
  test('sends listplayers', async () => {
    const { query, asked } = scriptedQuery({ listplayers: fixture('conan-listplayers.txt') });
    assert.deepEqual(await conanGame.readPlayers(query), ['76561198000735875']);
    assert.deepEqual(asked, ['listplayers']);
  });

  test('an unknown answer is a PlayerListError', async () => {
    const { query } = scriptedQuery({ listplayers: 'nope' });
    await assert.rejects(conanGame.readPlayers(query), PlayerListError);
  });
});
