import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { PlayerListError } from '../../src/games/errors.js';
import { gameFor } from '../../src/games/registry.js';
import { parseZomboidPlayers, zomboidGame } from '../../src/games/zomboid.js';
import { compileCommandPolicy } from '../../src/policy/command-policy.js';
import { compileFailurePatterns, failureIn } from '../../src/policy/failure-patterns.js';
import { fixture, scriptedQuery } from '../players/fixtures.js';

describe('parseZomboidPlayers', () => {
  test('every "-name" line after the header, names with spaces kept whole, log noise before it ignored', () => {
    assert.deepEqual(parseZomboidPlayers(fixture('zomboid-players.txt')), ['alice', 'bob the builder', 'Zed_Slayer99']);
  });

  test('nobody online', () => {
    assert.deepEqual(parseZomboidPlayers('Players connected (0): \n'), []);
  });

  test('without the header it is not a player list', () => {
    assert.equal(parseZomboidPlayers('-alice\n-bob'), null);
    assert.equal(parseZomboidPlayers('Unknown command players'), null);
  });
});

describe('zomboid game', () => {
  test('reads players with `players`', async () => {
    const { query, asked } = scriptedQuery({ players: 'Players connected (1): \n-alice\n' });
    assert.deepEqual(await zomboidGame.readPlayers(query), ['alice']);
    assert.deepEqual(asked, ['players']);
  });

  test('an answer that is no player list is a PlayerListError naming the game', async () => {
    const { query } = scriptedQuery({ players: 'something else' });
    await assert.rejects(
      zomboidGame.readPlayers(query),
      (error: unknown) => error instanceof PlayerListError && /zomboid/.test(error.message),
    );
  });

  test("the console's failure answers fail the delivery; a success does not", () => {
    const patterns = compileFailurePatterns(gameFor({ preset: 'zomboid' }));
    for (const answer of ['No such user', 'User bob not found.', "Item Base.Nope doesn't exist.", 'Unknown command additemm']) {
      assert.ok(failureIn(answer, patterns), answer);
    }
    assert.equal(failureIn("Item Base.Axe Added in alice's inventory.", patterns), null);
  });

  test('the default deny list refuses what no purchase needs, and lets deliveries through', () => {
    const policy = compileCommandPolicy(gameFor({ preset: 'zomboid' }));
    for (const command of ['quit', 'grantadmin "mallory"', 'setaccesslevel "mallory" admin', 'changeoption PVP true', 'banuser "alice"']) {
      assert.equal(policy.check(command).ok, false, command);
    }
    for (const command of ['additem "alice" "Base.Axe"', 'addxp "alice" Woodwork=100', 'servermsg "Thanks, alice!"']) {
      assert.equal(policy.check(command).ok, true, command);
    }
  });
});
