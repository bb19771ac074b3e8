import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { promisify } from 'node:util';
import { DEMO_GAME_NAMES } from '../../src/demo/demo-game-names.js';
import { GAMES } from '../../src/games/registry.js';
import { waitFor } from '../helpers/wait-for.js';
import { PorterProcess, WAIT } from './harness.js';

/**
 * `porter demo` as a newcomer runs it, for every game it can simulate: the bundled bin, nothing
 * configured. It must end by itself with exit 0 and a summary in which the purchases of the players
 * who are (or come) online were executed and the one for the player who never comes failed.
 */

const run = promisify(execFile);
const BIN = join(import.meta.dirname ?? new URL('.', import.meta.url).pathname, '../../bundle/porter.js');

describe('porter demo', () => {
  for (const name of DEMO_GAME_NAMES) {
    const scenario = GAMES[name].demo;
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

  test('--keep-running: goes on after every sample settled and past the 60 s a demo may take, delivers what porter sim buy adds, stops on SIGINT with 0', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'porter-demo-keep-'));
    const env: NodeJS.ProcessEnv = {};
    for (const [key, value] of Object.entries(process.env)) if (!key.startsWith('PORTER_') && key !== 'NODE_TEST_CONTEXT') env[key] = value;
    env.XDG_RUNTIME_DIR = dir; // where porter sim buy finds the demo
    const demo = new PorterProcess(['demo', '--keep-running', '--join-after', '500'], env);
    const buyer: PorterProcess[] = [];
    try {
      const { purchases } = GAMES.minecraft.demo;
      const settled = () => demo.events('delivery.done').length + demo.events('delivery.failed').length;
      // Stopped, or stopping (the daemon logs that at once): either fails the test there, with the output.
      const running = (what: string) =>
        (demo.exit || demo.events('porter.stopping').length > 0) &&
        assert.fail(`the demo stopped (${JSON.stringify(demo.exit)}) before ${what}\n${demo.tail()}`);
      // The 60 s a demo may take run from after its banner: note when the banner came.
      const bannerAt = await waitFor(() => (demo.stdout.includes('porter demo:') ? Date.now() : running('its banner')), {
        ...WAIT,
        what: 'the banner',
      });
      // Its normal end: without --keep-running it stops here.
      await waitFor(() => settled() === purchases.length + 1 || running('the samples settled'), { ...WAIT, what: 'every sample settled' });
      // The demo used to stop itself 60 s in, --keep-running or not: wait that out, and a little more.
      await waitFor(() => Date.now() - bannerAt > 65_000 || running('65 s'), { timeoutMs: 90_000, intervalMs: 250, what: '65 s' });

      const buy = new PorterProcess(['sim', 'buy', 'give {player} emerald 2', '--player', 'Steve'], env);
      buyer.push(buy);
      const bought = await buy.waitExit();
      assert.equal(bought.code, 0, buy.output);
      await waitFor(
        () => demo.events('delivery.done').some((line) => line.command === 'give Steve emerald 2') || running('the new purchase'),
        {
          ...WAIT,
          what: 'the purchase made after 65 s delivered',
        },
      );

      demo.kill('SIGINT');
      assert.deepEqual(await demo.waitExit(), { code: 0, signal: null }, demo.tail());
      assert.match(demo.stdout, /✔ EXECUTED\s+#\d+\s+give Steve emerald 2/);
    } finally {
      for (const p of [demo, ...buyer]) p.kill('SIGKILL');
      await Promise.allSettled([demo.exited, ...buyer.map((p) => p.exited)]);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
