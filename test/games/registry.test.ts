import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError } from '../../src/errors.js';
import { parseCustomLines } from '../../src/games/custom.js';
import { GAME_NAMES, gameFor } from '../../src/games/registry.js';
import { scriptedQuery } from '../players/fixtures.js';

const base = { refreshMs: 2000 } as const;

describe('gameFor', () => {
  test('every preset name gives a preset of that name that says which identifier it sends', () => {
    for (const name of GAME_NAMES.filter((game) => game !== 'custom')) {
      const preset = gameFor({ ...base, preset: name });
      assert.equal(preset.name, name);
      assert.ok(preset.identifier.length > 0);
    }
    const custom = gameFor({ ...base, preset: 'custom', command: 'who', pattern: '^(?<id>\\w+)$' });
    assert.equal(custom.name, 'custom');
  });

  test('only the source preset splits on ";"', () => {
    for (const name of GAME_NAMES.filter((game) => game !== 'custom' && game !== 'source')) {
      assert.equal(gameFor({ ...base, preset: name }).splitsOnSemicolon, false, name);
    }
    assert.equal(gameFor({ ...base, preset: 'source' }).splitsOnSemicolon, true);
  });

  test('minecraft presets are fresh per call: each server probes its own list command', () => {
    assert.notEqual(gameFor({ ...base, preset: 'minecraft' }), gameFor({ ...base, preset: 'minecraft' }));
  });

  test('custom without command or pattern, or with a bad pattern, is a ConfigError naming the key', () => {
    assert.throws(
      () => gameFor({ ...base, preset: 'custom', command: 'who' }),
      (error: unknown) => {
        assert.ok(error instanceof ConfigError);
        assert.match(error.message, /players\.pattern/);
        return true;
      },
    );
    assert.throws(() => gameFor({ ...base, preset: 'custom', command: 'who', pattern: '(' }), ConfigError);
    assert.throws(() => gameFor({ ...base, preset: 'custom', command: 'who', pattern: '\\w+' }), /named group/);
  });
});

describe('custom preset', () => {
  test('sends its command and applies the pattern to every line', async () => {
    const preset = gameFor({ ...base, preset: 'custom', command: 'who', pattern: '^\\s*\\d+\\) (?<id>\\S+) \\(online\\)$' });
    const { query, asked } = scriptedQuery({ who: 'Online:\n 1) alice (online)\n 2) bob (away)\n 3) carol (online)\n' });
    assert.deepEqual(await preset.readPlayers(query), ['alice', 'carol']);
    assert.deepEqual(asked, ['who']);
  });

  test('lines without a match, or with an empty id, add nothing', () => {
    assert.deepEqual(parseCustomLines('a=\nb=x\n', /^\w=(?<id>.*)$/), ['x']);
  });
});

describe('none preset', () => {
  test('reads nothing and asks nothing', async () => {
    const { query, asked } = scriptedQuery({});
    assert.deepEqual(await gameFor({ ...base, preset: 'none' }).readPlayers(query), []);
    assert.deepEqual(asked, []);
  });
});
