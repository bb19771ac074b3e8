import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { promisify } from 'node:util';
import { DEMO_GAMES } from '../../src/sim/demo-games.js';

/**
 * `porter demo` as a newcomer runs it, for every game it can simulate: the bundled bin, nothing
 * configured. It must end by itself with exit 0 and a summary in which the purchases of the players
 * who are (or come) online were executed and the one for the player who never comes failed.
 */

const run = promisify(execFile);
const BIN = join(import.meta.dirname ?? new URL('.', import.meta.url).pathname, '../../bundle/porter.js');

describe('porter demo', () => {
  for (const [name, scenario] of Object.entries(DEMO_GAMES)) {
    test(`--game ${name}: every purchase settles, the absent player's fails, exit 0`, async () => {
      const { stdout } = await run(process.execPath, [BIN, 'demo', '--game', name, '--join-after', '500'], { timeout: 90_000 });
      assert.match(stdout, new RegExp(`simulated ${scenario.title} server`));
      const summary = stdout.slice(stdout.indexOf('What the store saw:'));
      const rows = summary.split('\n').filter((line) => /^\s+[✔✖…] /.test(line));
      assert.equal(rows.length, scenario.purchases.length + 1, summary);
      for (const row of rows) {
        const absent = row.includes(`"${scenario.absent}"`) || row.includes(` ${scenario.absent} `);
        assert.match(row, absent ? /✖ FAILED/ : /✔ EXECUTED/, row);
      }
    });
  }
});
