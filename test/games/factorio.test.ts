import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { PlayerListError } from '../../src/games/errors.js';
import { factorioGame, parseFactorioPlayers } from '../../src/games/factorio.js';
import { fixture, scriptedQuery } from '../players/fixtures.js';

describe('parseFactorioPlayers', () => {
  test('/players online', () => {
    assert.deepEqual(parseFactorioPlayers(fixture('factorio-players-online.txt')), ['alice', 'bob']);
  });

  test('nobody online', () => {
    assert.deepEqual(parseFactorioPlayers(fixture('factorio-players-empty.txt')), []);
  });

  test('/players (everyone): only the rows marked online', () => {
    assert.deepEqual(parseFactorioPlayers(fixture('factorio-players-all.txt')), ['alice', 'carol']);
  });

  test('older "Online Players" capitalisation', () => {
    assert.deepEqual(parseFactorioPlayers('Online Players (1):\n  player (online)\n'), ['player']);
  });

  test('anything else is not a player list', () => {
    assert.equal(parseFactorioPlayers('Unknown command "players".'), null);
  });
});

describe('factorio preset', () => {
  test('sends /players online', async () => {
    const { query, asked } = scriptedQuery({ '/players online': fixture('factorio-players-online.txt') });
    assert.deepEqual(await factorioGame.readPlayers(query), ['alice', 'bob']);
    assert.deepEqual(asked, ['/players online']);
  });

  test('an unknown answer is a PlayerListError', async () => {
    const { query } = scriptedQuery({ '/players online': 'Unknown command "players".' });
    await assert.rejects(factorioGame.readPlayers(query), PlayerListError);
  });
});
