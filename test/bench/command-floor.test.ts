import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { startLeanApi, type LeanApi } from '../../bench/lib/lean-api.js';
import { startRconServer, type FakeRconServer } from '../../src/sim/rcon-server.js';
import { SIM_SERVER_ID, SIM_TOKEN } from '../../src/sim/seller-api.js';
import { scratchDirs } from '../helpers/scratch-dirs.js';

const FLOOR = fileURLToPath(new URL('../../bench/command-floor.js', import.meta.url));
const PASSWORD = 'command-floor-test';
const scratch = scratchDirs('porter-command-floor-', 'each');

function startFloor(api: LeanApi, game: FakeRconServer, count: string, journal?: string) {
  return spawn(process.execPath, [FLOOR, api.url, SIM_SERVER_ID, String(game.port), count, ...(journal ? [journal] : [])], {
    stdio: ['pipe', 'pipe', 'pipe'],
    env: { ...process.env, BENCH_API_TOKEN: SIM_TOKEN, BENCH_RCON_PASSWORD: PASSWORD },
  });
}

describe('the command floor (bench/command-floor.ts): pull, run, report, and nothing else', () => {
  let api: LeanApi;
  let game: FakeRconServer;

  before(async () => {
    api = await startLeanApi(SIM_TOKEN);
    game = await startRconServer({ password: PASSWORD });
  });

  after(async () => {
    await api.close();
    await game.close();
  });

  test('in slices: each count on stdin is delivered once and answered with its CPU, each claim and outcome journaled; stdin ending ends it', async () => {
    const journal = join(scratch(), 'floor-journal.log');
    const floor = startFloor(api, game, '-', journal);
    let err = '';
    floor.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    const lines = createInterface({ input: floor.stdout })[Symbol.asyncIterator]();
    const doneBefore = api.done;
    const ranBefore = game.executed.length;
    for (const [slice, count] of [
      [1, 3],
      [2, 5],
    ] as const) {
      for (let i = 0; i < count; i++) api.enqueue(`say slice ${slice} #${i}`);
      floor.stdin.write(`${count}\n`);
      const next = await lines.next();
      assert.equal(next.done, false, err);
      const answer = JSON.parse(next.value) as { commands: number; cpuMs: number };
      assert.equal(answer.commands, count);
      assert.ok(answer.cpuMs > 0, `the slice's own CPU: ${answer.cpuMs} ms`);
      assert.equal(api.done - doneBefore, slice === 1 ? 3 : 8, 'every command of the slice reported done, none of the next');
    }
    assert.deepEqual(
      game.executed.slice(ranBefore).map((c) => c.command),
      [0, 1, 2].map((i) => `say slice 1 #${i}`).concat([0, 1, 2, 3, 4].map((i) => `say slice 2 #${i}`)),
      'each command run once, in order',
    );
    assert.equal(api.unexpectedReports, 0);
    floor.stdin.end();
    const [code] = (await once(floor, 'exit')) as [number | null];
    assert.equal(code, 0, err);
    const written = readFileSync(journal, 'utf8').trim().split('\n');
    assert.equal(written.length, 16, 'a claim and an outcome per command');
  });

  test('a count that is not a number is refused with the usage line', async () => {
    const floor = startFloor(api, game, 'many');
    let err = '';
    floor.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    const [code] = (await once(floor, 'exit')) as [number | null];
    assert.equal(code, 2);
    assert.match(err, /usage: .*<commands\|->/);
  });
});
