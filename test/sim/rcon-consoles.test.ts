import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { RconServer } from '../../src/sim/rcon-server.js';

/** A simulated RCON server that never listens: what it would answer, and in which dialect. */
const playing = (options: ConstructorParameters<typeof RconServer>[0]) => new RconServer(options);
const PASSWORD = 'pw';

describe("the RCON simulator plays a game by the game's id", () => {
  test("a game's id picks its dialect and its console", () => {
    const zomboid = playing({ password: PASSWORD, game: 'zomboid', players: ['alice'] });
    assert.equal(zomboid.flavour, 'source');
    assert.equal(zomboid.answerFor('players').text, 'Players connected (1): \n-alice');
    const palworld = playing({ password: PASSWORD, game: 'palworld', players: ['Ann'] });
    assert.equal(palworld.flavour, 'id0');
    assert.match(palworld.answerFor('ShowPlayers').text, /^name,playeruid,steamid\nAnn,/);
    const minecraft = playing({ password: PASSWORD, game: 'minecraft', players: ['Steve'] });
    assert.equal(minecraft.flavour, 'minecraft');
    assert.match(minecraft.answerFor('list').text, /^There are 1 of a max of 20 players online: Steve/);
  });

  test("a game's own listing is a read-only query for its simulator alone; the listings every simulator knows are for all", () => {
    const palworld = playing({ password: PASSWORD, game: 'palworld' });
    assert.equal(palworld.isQuery('ShowPlayers'), true);
    assert.equal(palworld.isQuery('showplayers'), true);
    assert.equal(palworld.isQuery('Broadcast hello'), false);
    assert.equal(palworld.isQuery('status'), true);
    assert.equal(playing({ password: PASSWORD, game: 'minecraft' }).isQuery('ShowPlayers'), false);
    palworld.run('ShowPlayers', 1);
    palworld.run('Broadcast hello', 1);
    assert.deepEqual(
      palworld.executed.map(({ command, query }) => [command, query]),
      [
        ['ShowPlayers', true],
        ['Broadcast hello', false],
      ],
    );
  });

  test('an RCON game without a console of its own is simulated as a Source server', () => {
    const ark = playing({ password: PASSWORD, game: 'ark', players: ['Bob'] });
    assert.equal(ark.game, 'ark');
    assert.equal(ark.flavour, 'source');
    assert.match(ark.answerFor('status').text, /^# userid name uniqueid/m);
  });

  test("a dialect alone plays that dialect's own game, and one given with a game overrides the game's", () => {
    assert.equal(playing({ password: PASSWORD }).game, 'minecraft');
    assert.equal(playing({ password: PASSWORD, flavour: 'source' }).game, 'source');
    assert.equal(playing({ password: PASSWORD, flavour: 'id0' }).game, 'palworld');
    const idZero = playing({ password: PASSWORD, game: 'zomboid', flavour: 'id0', players: ['alice'] });
    assert.equal(idZero.flavour, 'id0');
    assert.match(idZero.answerFor('players').text, /^Players connected \(1\)/);
  });
});
