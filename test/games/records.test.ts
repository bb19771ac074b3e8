import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { DEMO_GAME_NAMES } from '../../src/demo/demo-game-names.js';
import { GAMES, GAME_NAMES } from '../../src/games/registry.js';

/** dist/src, beside this test's dist/test/games. */
const SRC = new URL('../../src/', import.meta.url);
const ids: readonly string[] = GAME_NAMES;

/** The .js files of a folder of dist/src, by name without the extension. */
function filesIn(folder: string): string[] {
  return readdirSync(new URL(folder, SRC))
    .filter((name) => name.endsWith('.js'))
    .map((name) => name.slice(0, -'.js'.length));
}

describe('game records', () => {
  test('one record per id: the registry keys each record by its own id, each id once', () => {
    assert.equal(new Set(ids).size, ids.length);
    assert.deepEqual(Object.keys(GAMES), ids);
    for (const [key, record] of Object.entries(GAMES)) assert.equal(record.id, key);
  });

  test("each game's record is in the file named by its id, and the game it plays for a server is named by it too", () => {
    for (const id of ids) {
      assert.ok(existsSync(new URL(`games/${id}.js`, SRC)), `src/games/${id}.ts`);
      if (id !== 'custom') assert.equal(GAMES[id as keyof typeof GAMES].forServer({}).name, id);
    }
  });

  test("a file that belongs to one game's probe or simulated console is named by the game's id, never another spelling", () => {
    // The files there that serve more than one game, and say which in their opening comment.
    const shared = new Set(['battleye', 'itzg', 'unreal-ini']);
    for (const folder of ['init/detect/probes/', 'sim/consoles/']) {
      for (const name of filesIn(folder)) {
        assert.ok(ids.includes(name) || shared.has(name), `src/${folder}${name}.ts is named by no game's id`);
      }
    }
  });

  test("the demo offers the games whose record has a scenario, in the registry's order, the ones it always had among them", () => {
    const always = ['minecraft', 'zomboid', '7dtd', 'terraria', 'dayz'];
    assert.deepEqual(
      DEMO_GAME_NAMES.filter((id) => always.includes(id)),
      always,
    );
    assert.deepEqual(
      DEMO_GAME_NAMES,
      ids.filter((id) => 'demo' in GAMES[id as keyof typeof GAMES]),
    );
  });
});
