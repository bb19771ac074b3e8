import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { PlayerListError } from '../../src/games/errors.js';
import { palworldGame, parsePalworldShowPlayers } from '../../src/games/palworld.js';
import { fixture, scriptedQuery } from '../players/fixtures.js';

describe('parsePalworldShowPlayers', () => {
  test('the steamid column of every row', () => {
    assert.deepEqual(parsePalworldShowPlayers(fixture('palworld-showplayers.txt')), ['76561197993593793', '76561198000000000']);
  });

  test('names with commas are split from the right; rows still loading (uid 00000000) are skipped', () => {
    assert.deepEqual(parsePalworldShowPlayers(fixture('palworld-showplayers-edge.txt')), ['76561198000000011', '76561198000000013']);
  });

  test('header only: nobody online', () => {
    assert.deepEqual(parsePalworldShowPlayers(fixture('palworld-empty.txt')), []);
  });

  test('a steam_ prefix is removed; rows without a steamid are skipped', () => {
    assert.deepEqual(parsePalworldShowPlayers('name,playeruid,steamid\nA,1,steam_76561198000000021\nB,2,\n'), ['76561198000000021']);
  });

  test('without the CSV header it is not a player list', () => {
    assert.equal(parsePalworldShowPlayers('Kupie,4160040412,76561197993593793'), null);
    assert.equal(parsePalworldShowPlayers(''), null);
  });
});

describe('palworld preset', () => {
  test('sends ShowPlayers', async () => {
    const { query, asked } = scriptedQuery({ ShowPlayers: fixture('palworld-showplayers.txt') });
    assert.deepEqual(await palworldGame.readPlayers(query), ['76561197993593793', '76561198000000000']);
    assert.deepEqual(asked, ['ShowPlayers']);
  });

  test('an unknown answer is a PlayerListError', async () => {
    const { query } = scriptedQuery({ ShowPlayers: '' });
    await assert.rejects(palworldGame.readPlayers(query), PlayerListError);
  });
});
