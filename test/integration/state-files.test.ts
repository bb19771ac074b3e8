import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { waitFor } from '../helpers/wait-for.js';
import { makeOdd, refusalOf, type OddKind } from '../helpers/odd-files.js';
import { SIM_SERVER_ID, startBed, WAIT, type TestBed } from './harness.js';

/**
 * Through the real CLI: a FIFO, a UNIX socket or a directory where porter keeps a state file never
 * hangs `porter run`, `porter history`, /history or a graceful stop. Found at start, it is exit 78
 * naming the file, what it is and the fix; put there while porter runs (history.jsonl, the lock
 * file), deliveries go on, /history answers 500 naming it, `porter history` exits 78 naming it,
 * and SIGTERM still stops porter within the drain bound. Every wait is bounded, so a hang (the old
 * code) is a failing test, and the bed kills whatever it spawned.
 */

async function history(bed: TestBed): Promise<{ code: number | null; stderr: string }> {
  const run = bed.spawnPorter({ args: ['history', '-c', bed.configPath] });
  const exit = await run.waitExit();
  return { code: exit.code, stderr: run.stderr };
}

const AT_START: ReadonlyArray<readonly [string, OddKind]> = [
  ['history.jsonl', 'FIFO'],
  ['journal.json', 'FIFO'],
  ['journal-1.log', 'directory'],
  ['porter.lock', 'FIFO'],
  ['porter.lock', 'UNIX socket'],
];

describe('state files that are not regular files (real CLI)', () => {
  for (const [file, kind] of AT_START) {
    test(`a ${kind} as ${file} at start: porter run and porter check exit 78 naming it; porter history does not hang`, async () => {
      const bed = await startBed();
      const stateDir = join(bed.dir, 'state');
      mkdirSync(stateDir);
      const path = join(stateDir, file);
      const remove = await makeOdd(path, kind);
      try {
        bed.writeConfig();
        const porter = bed.spawnPorter();
        assert.deepEqual(await porter.waitExit(), { code: 78, signal: null }, porter.tail());
        assert.match(porter.stderr, new RegExp(`^porter: E_STATE_FILE: ${refusalOf(path, kind).source}`, 'm'));
        assert.deepEqual(
          bed.api.requests.filter((r) => r.route === 'pull'),
          [],
          'nothing is pulled',
        );
        const check = bed.spawnPorter({ args: ['check', '-c', bed.configPath] });
        assert.equal((await check.waitExit()).code, 78, check.tail());
        assert.match(check.stdout, new RegExp(`^✖ ${refusalOf(path, kind).source}$`, 'm'), 'porter check names it on its state line');
        const read = await history(bed);
        if (file.startsWith('history')) {
          assert.equal(read.code, 78, read.stderr);
          assert.match(read.stderr, refusalOf(path, kind));
        } else {
          assert.equal(read.code, 0, read.stderr);
        }
      } finally {
        await remove();
        await bed.close();
      }
    });
  }

  test('FIFOs put in place of history.jsonl and porter.lock while porter runs: deliveries go on, /history and porter history name it, SIGTERM stops it', async () => {
    const bed = await startBed();
    try {
      bed.writeConfig((config) => Object.assign(config, { health: { listen: '127.0.0.1:0' } }));
      const porter = bed.spawnPorter();
      const listening = await porter.waitForEvent('health.listening');
      await porter.waitForEvent('porter.started');
      const delivered = (id: string) => () => bed.api.commands().find((c) => c.id === id)?.status === 'EXECUTED' || porter.exit;
      const first = bed.api.enqueue(SIM_SERVER_ID, { command: 'give Steve diamond 1' });
      await waitFor(delivered(first), { ...WAIT, what: 'the first delivery' });
      const historyPath = join(bed.dir, 'state', 'history.jsonl');
      await waitFor(() => existsSync(historyPath), { ...WAIT, what: 'history.jsonl' });
      unlinkSync(historyPath);
      await makeOdd(historyPath, 'FIFO');

      const response = await fetch(`http://127.0.0.1:${String(listening.port)}/history`, { signal: AbortSignal.timeout(WAIT.timeoutMs) });
      assert.equal(response.status, 500);
      assert.match(((await response.json()) as { error: string }).error, refusalOf(historyPath, 'FIFO'));

      const read = await history(bed);
      assert.equal(read.code, 78, read.stderr);
      assert.match(read.stderr, new RegExp(`^porter: E_STATE_FILE: ${refusalOf(historyPath, 'FIFO').source}`, 'm'));

      const second = bed.api.enqueue(SIM_SERVER_ID, { command: 'give Steve diamond 2' });
      await waitFor(delivered(second), { ...WAIT, what: 'a delivery while history.jsonl is a FIFO' });
      const logged = await porter.waitForEvent('history.write.failed');
      // The operator reads why: the file that is not a regular file, named.
      assert.match(String(logged.err), refusalOf(historyPath, 'FIFO'));

      const lockPath = join(bed.dir, 'state', 'porter.lock');
      unlinkSync(lockPath);
      await makeOdd(lockPath, 'FIFO');
      porter.kill('SIGTERM');
      // shutdown.drainMs is 10 s in the bed's config: the stop must come within it, with room for a loaded machine.
      assert.deepEqual(await porter.waitExit(10_000 + WAIT.timeoutMs), { code: 0, signal: null }, porter.tail());
    } finally {
      await bed.close();
    }
  });
});
