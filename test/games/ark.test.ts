import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { PlayerListError } from '../../src/games/errors.js';
import { arkGame, parseArkListPlayers } from '../../src/games/ark.js';
import { fixture, scriptedQuery } from '../players/fixtures.js';

describe('parseArkListPlayers', () => {
  test('Survival Evolved rows: SteamID64 after the last comma (names may contain commas)', () => {
    assert.deepEqual(parseArkListPlayers(fixture('ark-listplayers.txt')), ['76561198000000001', '76561198000000002', '76561198000000003']);
  });

  test('Survival Ascended rows: EOS ids', () => {
    assert.deepEqual(parseArkListPlayers(fixture('ark-listplayers-ascended.txt')), [
      '0002a10186d9414496bf20d22d3860ba',
      '00020817daeb4e2faf717bdeeb18a9da',
    ]);
  });

  test('No Players Connected', () => {
    assert.deepEqual(parseArkListPlayers(fixture('ark-no-players.txt')), []);
    assert.deepEqual(parseArkListPlayers('No Players Connected \n'), []);
  });

  test('anything else is not a player list', () => {
    assert.equal(parseArkListPlayers('Server received, But no response!! \n'), null);
    assert.equal(parseArkListPlayers(''), null);
  });
});

describe('ark preset', () => {
  test('sends ListPlayers', async () => {
    const { query, asked } = scriptedQuery({ ListPlayers: fixture('ark-no-players.txt') });
    assert.deepEqual(await arkGame.readPlayers(query), []);
    assert.deepEqual(asked, ['ListPlayers']);
  });

  test('an unknown answer is a PlayerListError', async () => {
    const { query } = scriptedQuery({ ListPlayers: 'Server received, But no response!!' });
    await assert.rejects(arkGame.readPlayers(query), PlayerListError);
  });
});
