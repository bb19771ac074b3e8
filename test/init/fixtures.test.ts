import { readdirSync } from 'node:fs';
import { inspect } from 'node:util';
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { detectIn, gameDir, onlyDetection, problemCodes } from './helpers.js';

/**
 * Every folder of test/fixtures/game-dirs, as a new user would point `porter init` at it, and what
 * detection must make of it (the same table is in that folder's README.md).
 */
const EXPECTED = {
  minecraft: { game: 'minecraft', type: 'rcon', port: 25575, password: 'mcFixtureRcon25575', problems: [] },
  'minecraft-rcon-off': {
    game: 'minecraft',
    type: 'rcon',
    port: 25575,
    password: undefined,
    problems: ['rcon-disabled', 'password-empty'],
  },
  'minecraft-itzg': {
    game: 'minecraft',
    type: 'rcon',
    port: 25575,
    password: '3f9c0a7be15d42c8a06e9b71',
    problems: ['password-changes-on-restart'],
  },
  palworld: { game: 'palworld', type: 'rcon', port: 25575, password: 'palFixtureAdmin8211', problems: [] },
  'palworld-rcon-off': { game: 'palworld', type: 'rcon', port: 25575, password: undefined, problems: ['rcon-disabled', 'password-empty'] },
  ark: { game: 'ark', type: 'rcon', port: 27020, password: 'arkFixtureAdmin27020', problems: [] },
  rust: { game: 'rust', type: 'webrcon', port: 28016, password: 'rustFixtureRcon28016', problems: [] },
  source: { game: 'source', type: 'rcon', port: 27015, password: 'cs2FixtureRcon27015', problems: ['port-assumed'] },
  conan: { game: 'conan', type: 'rcon', port: 25575, password: 'conanFixtureRcon25575', problems: [] },
  squad: { game: 'squad', type: 'rcon', port: 21114, password: 'squadFixtureRcon21114', problems: [] },
  zomboid: { game: 'zomboid', type: 'rcon', port: 27015, password: 'zomboidFixtureRcon27015', problems: [] },
  '7dtd': { game: '7dtd', type: 'telnet', port: 8081, password: 'sdtdFixtureTelnet8081', problems: [] },
  dayz: { game: 'dayz', type: 'battleye', port: 2305, password: 'dayzFixtureRcon2305', problems: [] },
  arma3: { game: 'arma3', type: 'battleye', port: 2306, password: 'arma3FixtureRcon2306', problems: [] },
  terraria: { game: 'terraria', type: 'tshock', port: 7878, password: 'terrariaFixtureToken7878', problems: [] },
} as const;

describe('the fixture game folders', () => {
  test('every fixture folder has its expectation here', () => {
    const folders = readdirSync(gameDir('.'), { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name)
      .sort();
    assert.deepEqual(folders, Object.keys(EXPECTED).sort());
  });

  for (const [fixture, expected] of Object.entries(EXPECTED)) {
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
    for (const [fixture, expected] of Object.entries(EXPECTED)) {
      const report = detectIn(gameDir(fixture));
      const printed = [JSON.stringify(report), inspect(report, { depth: 10 }), String(report.detections[0]?.password)];
      for (const text of printed) {
        if (expected.password) assert.ok(!text.includes(expected.password), `${fixture}: the password was printed`);
      }
    }
  });
});
