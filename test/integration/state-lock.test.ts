import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { currentHolder } from '../../src/delivery/state/lock-holder.js';
import { waitFor } from '../helpers/wait-for.js';
import { acceptedReports, SIM_SERVER_ID, startBed, WAIT, type PorterProcess } from './harness.js';

/**
 * Through the real CLI: two `porter run` started at the same instant on one state
 * directory, with no lock or with a stale lock naming a live process that is not porter (the
 * reused-pid case after a reboot): exactly one runs and delivers, the other exits 78 naming the
 * holder's pid. A stale lock never keeps porter out.
 */

const stale = {
  none: undefined,
  'a live pid that is not porter (the test runner, another start time)': { pid: process.pid, start: '1', boot: currentHolder().boot },
};

describe('two porters started at once on one state directory (real CLI)', () => {
  for (const [name, lock] of Object.entries(stale)) {
    test(`exactly one runs, the other exits 78 naming it; stale lock: ${name}`, async () => {
      const bed = await startBed();
      try {
        bed.writeConfig();
        if (lock) {
          mkdirSync(join(bed.dir, 'state'));
          writeFileSync(join(bed.dir, 'state', 'porter.lock'), JSON.stringify(lock));
        }
        const id = bed.api.enqueue(SIM_SERVER_ID, { command: 'say once', offlineExecute: true });
        const both = [bed.spawnPorter(), bed.spawnPorter()];
        const loser = await waitFor(() => both.find((p) => p.exit !== undefined), { ...WAIT, what: 'one of the two to exit' });
        const winner = both.find((p) => p !== loser) as PorterProcess;
        assert.deepEqual(loser.exit, { code: 78, signal: null }, loser.tail());
        assert.match(
          loser.stderr,
          new RegExp(
            `^porter: E_CONFIG: state directory \\S+ is in use by another porter process \\(pid ${winner.pid}, on host [^)]*\\): stop it, or give this instance its own stateDir`,
            'm',
          ),
        );
        await winner.waitForEvent('porter.started');
        await waitFor(() => bed.api.commands().some((c) => c.id === id && acceptedReports(c) === 1), { ...WAIT, what: 'the delivery' });
        assert.equal(bed.ranCount('say once'), 1);
        if (lock) {
          const takeovers = winner.events('state.lock.takeover');
          assert.equal(takeovers.length, 1, winner.tail());
          assert.deepEqual(takeovers[0]!.previousHolder, lock, 'the line names the holder it took over from');
        }
        assert.equal((JSON.parse(readFileSync(join(bed.dir, 'state', 'porter.lock'), 'utf8')) as { pid: number }).pid, winner.pid);
        winner.kill('SIGTERM');
        assert.deepEqual(await winner.waitExit(), { code: 0, signal: null }, winner.tail());
      } finally {
        await bed.close();
      }
    });
  }
});
