import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { formatHolder, type LockHolder } from '../../src/delivery/state/lock-holder.js';
import { LEASE } from '../../src/delivery/state/state-lease.js';
import { waitFor } from '../helpers/wait-for.js';
import { SIM_SERVER_ID, startBed, WAIT } from './harness.js';

/**
 * Through the real CLI: a porter frozen past its lease (SIGSTOP, a paused container)
 * while another porter took its state directory over must not claim or write anything there once
 * thawed: it finds another's record in porter.lock, logs state.lock.lost and exits 78, leaving the
 * journal as the new holder has it.
 */

const other: LockHolder = { pid: 7, host: 'porter-new-pod', pidns: 'pid:[4026599991]', nonce: '5e'.repeat(12), lease: 1, at: 1 };

/** Every file of the state directory but porter.lock, with its bytes. */
function journalFiles(dir: string): Record<string, string> {
  const files: Record<string, string> = {};
  for (const name of readdirSync(dir).sort()) if (name !== 'porter.lock') files[name] = readFileSync(join(dir, name), 'latin1');
  return files;
}

describe('a porter whose state directory was taken over while it was frozen (real CLI)', () => {
  test('thawed, it claims nothing, writes nothing there, and exits 78 with state.lock.lost', async () => {
    const bed = await startBed();
    try {
      // An idle pull every 5 s, frozen just after one was answered: no pull is on its way at the stop,
      // and the next falls due during the freeze, so the thawed porter decides one at once.
      bed.writeConfig((config) => {
        config.poll.idleMs = 5_000;
      });
      const porter = bed.spawnPorter();
      await porter.waitForEvent('porter.started');
      const state = join(bed.dir, 'state');
      await waitFor(() => bed.api.requests.some((r) => r.route === 'pull'), { ...WAIT, what: 'the first pull' });
      porter.kill('SIGSTOP');
      const frozenAt = Date.now();
      const before = journalFiles(state);
      // Another porter's takeover, as a contender writes it: a whole file renamed into place.
      writeFileSync(join(state, 'porter.lock.new'), formatHolder(other));
      renameSync(join(state, 'porter.lock.new'), join(state, 'porter.lock'));
      // Frozen past the claim window: the schedule of the fault, not a condition (any longer freeze is the same fault).
      await new Promise((resolve) => setTimeout(resolve, LEASE.claimWithinMs + 2_000 - (Date.now() - frozenAt)));
      // Queued only now: a pull porter sent just before the stop has been answered (empty) by the
      // simulator meanwhile, so only a pull sent after the thaw could claim this. Queued at the
      // stop, that earlier pull took it on a loaded machine: a claim from before the freeze.
      const claimed = bed.api.claimedCount;
      bed.api.enqueue(SIM_SERVER_ID, { command: 'say not-claimed', offlineExecute: true });
      porter.kill('SIGCONT');
      assert.deepEqual(await porter.waitExit(), { code: 78, signal: null }, porter.tail());
      const lost = porter.events('state.lock.lost');
      assert.equal(lost.length, 1, porter.tail());
      assert.match(String(lost[0]!.reason), /now names pid 7, on host porter-new-pod, in pid namespace pid:\[4026599991\]/);
      assert.equal(bed.api.claimedCount, claimed, 'nothing claimed after the thaw');
      assert.deepEqual(journalFiles(state), before, 'the journal is as the new holder has it');
      assert.deepEqual(JSON.parse(readFileSync(join(state, 'porter.lock'), 'utf8')), other, "the new holder's record stays");
    } finally {
      await bed.close();
    }
  });
});
