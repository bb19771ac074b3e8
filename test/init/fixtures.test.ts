import { readdirSync } from 'node:fs';
import { inspect } from 'node:util';
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { fixtureTable } from './fixture-table.js';
import { detectIn, gameDir, onlyDetection, problemCodes } from './helpers.js';

/** Every folder of test/fixtures/game-dirs, as a new user would point `porter init` at it, and what detection must make of it: the folder's README.md table. */
const EXPECTED = fixtureTable();

describe('the fixture game folders', () => {
  test('every fixture folder has its row in the README table, and the table reads as expected', () => {
    assert.deepEqual(EXPECTED.get('source'), {
      game: 'source',
      type: 'rcon',
      port: 27015,
      password: 'cs2FixtureRcon27015',
      problems: ['port-assumed'],
    });
    assert.deepEqual(EXPECTED.get('minecraft-rcon-off')?.problems, ['rcon-disabled', 'password-empty']);
    assert.equal(EXPECTED.get('minecraft-rcon-off')?.password, undefined);
    const folders = readdirSync(gameDir('.'), { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name)
      .sort();
    assert.deepEqual(folders, [...EXPECTED.keys()].sort());
  });

  for (const [fixture, expected] of EXPECTED) {
    test(`${fixture}: ${expected.game} over ${expected.type} on port ${expected.port}`, () => {
      const report = detectIn(gameDir(fixture));
      const detection = onlyDetection(report);
      assert.equal(detection.game, expected.game);
      assert.deepEqual(detection.executor, { type: expected.type, host: '127.0.0.1', port: expected.port });
      assert.equal(detection.password?.reveal(), expected.password);
      assert.deepEqual(problemCodes(detection), expected.problems);
      assert.deepEqual(report.notes, []);
      assert.ok(detection.settingsFile?.startsWith(gameDir(fixture)));
      assert.equal(detection.process, undefined);
    });
  }

  test('what was found is shown with where it came from, relative to the folder given', () => {
    const detection = onlyDetection(detectIn(gameDir('minecraft')));
    assert.deepEqual(detection.found, [
      { setting: 'enable-rcon', shown: 'true', source: './server.properties' },
      { setting: 'rcon.port', shown: '25575', source: './server.properties' },
      { setting: 'rcon.password', shown: 'set (18 characters)', source: './server.properties' },
    ]);
  });

  test('no password is ever in what a detection prints: JSON, inspect, template strings, messages', () => {
    for (const [fixture, expected] of EXPECTED) {
      const report = detectIn(gameDir(fixture));
      const printed = [JSON.stringify(report), inspect(report, { depth: 10 }), String(report.detections[0]?.password)];
      for (const text of printed) {
        if (expected.password) assert.ok(!text.includes(expected.password), `${fixture}: the password was printed`);
      }
    }
  });
});
