import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, readlinkSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import type { LockHolder } from '../../src/delivery/state/lock-holder.js';
import { waitFor } from '../helpers/wait-for.js';
import { acceptedReports, gate, SIM_SERVER_ID, startBed, WAIT } from './harness.js';

/**
 * Through the real CLI: two porters on one state directory in different pid and network
 * namespaces, as two containers on one volume are. The kernel lock is per network namespace and a
 * pid means nothing in another pid namespace, so the second one used to take the lock from the live
 * first one (its pid named nothing there) and rotate its journal. Now the second watches the
 * first's lease, sees it move, and exits 78 naming it, while the first goes on delivering. Killed
 * with SIGKILL holding a claim, the first is taken over by a porter in yet another pid namespace
 * once its lease stood still for the whole watch, and that one reports the claim: nothing stays
 * PROCESSING.
 */

const UNSHARE_PID = ['unshare', '--pid', '--fork', '--kill-child', '--mount-proc'];
const UNSHARE_PID_NET = [...UNSHARE_PID, '--net'];

function unshareRefused(): string | false {
  const probe = spawnSync(UNSHARE_PID_NET[0]!, [...UNSHARE_PID_NET.slice(1), 'true'], { encoding: 'utf8', timeout: 15_000 });
  const reason =
    probe.status === 0
      ? false
      : `unshare --pid --net is not permitted here (${(probe.stderr || probe.error?.message || String(probe.status)).trim()})`;
  if (reason && process.env.PORTER_REQUIRE_SHIP_TOOLS === '1') throw new Error(`${reason}; CI requires it`);
  return reason;
}

describe('two porters on one state directory in different namespaces (real CLI)', { skip: unshareRefused() }, () => {
  test('the second is refused with 78 naming the first, which goes on; after kill -9 a third takes over and reports its claim', async () => {
    const bed = await startBed();
    const held = gate();
    const heldAgain = gate();
    try {
      bed.writeConfig();
      bed.rcon.setHandler((command) =>
        command === 'say held'
          ? { text: '', after: held.promise }
          : command === 'say held-again'
            ? { text: '', after: heldAgain.promise }
            : undefined,
      );
      const first = bed.spawnPorter();
      await first.waitForEvent('porter.started');
      const heldId = bed.api.enqueue(SIM_SERVER_ID, { command: 'say held', offlineExecute: true });
      await waitFor(() => bed.rcon.executed.some((e) => e.command === 'say held') || first.exit, { ...WAIT, what: 'the command in hand' });

      // Another pid and network namespace: no kernel lock shared, the first's pid names nothing there.
      const second = bed.spawnPorter({ prefix: [...UNSHARE_PID_NET, '--'] });
      assert.deepEqual(await second.waitExit(), { code: 78, signal: null }, second.tail());
      const ns = readlinkSync('/proc/self/ns/pid');
      assert.match(
        second.stderr,
        new RegExp(
          `^porter: E_CONFIG: state directory \\S+ is in use by another porter process \\(pid ${first.pid}, on host ${hostname()}, in pid namespace ${ns.replace(/[[\]]/g, '\\$&')}, lease \\d+ refreshed at \\S+ by its clock\\): stop it, or give this instance its own stateDir\\. It runs where this porter cannot see it \\(it runs in another pid namespace`,
          'm',
        ),
      );
      assert.equal(second.events('state.lock.watching').length, 1, second.tail());
      assert.equal(second.events('state.lock.takeover').length, 0, second.tail());

      // The first was never disturbed: its command in hand and the next are delivered and reported.
      assert.equal(first.exit, undefined, first.tail());
      held.open();
      const next = bed.api.enqueue(SIM_SERVER_ID, { command: 'say next', offlineExecute: true });
      await waitFor(() => [heldId, next].every((id) => bed.api.commands().some((c) => c.id === id && acceptedReports(c) === 1)), {
        ...WAIT,
        what: 'both deliveries reported by the first porter',
      });
      assert.equal(first.events('state.lock.lost').length, 0);

      // kill -9 with a claim in hand: the journal holds it, the lock file names a dead porter.
      const lostId = bed.api.enqueue(SIM_SERVER_ID, { command: 'say held-again', offlineExecute: true });
      await waitFor(() => bed.rcon.executed.some((e) => e.command === 'say held-again') || first.exit, {
        ...WAIT,
        what: 'the second command in hand',
      });
      first.kill('SIGKILL');
      await first.waitExit();
      assert.equal(bed.api.commands().find((c) => c.id === lostId)?.status, 'PROCESSING');

      // A porter in another pid namespace (the network stays shared: it reports to the simulator).
      const third = bed.spawnPorter({ prefix: [...UNSHARE_PID, '--'] });
      const takeover = await third.waitForEvent('state.lock.takeover');
      assert.equal((takeover.previousHolder as LockHolder).pid, first.pid);
      assert.match(String(takeover.reason), /did not change for 15 s of watching: it runs in another pid namespace/);
      await waitFor(() => bed.api.commands().find((c) => c.id === lostId)?.status === 'FAILED' || third.exit, {
        ...WAIT,
        what: "the dead porter's claim reported by the third",
      });
      assert.match(bed.api.commands().find((c) => c.id === lostId)!.error ?? '', /^outcome unknown/);
      assert.equal(bed.ranCount('say held-again'), 1);
      const record = JSON.parse(readFileSync(join(bed.dir, 'state', 'porter.lock'), 'utf8')) as LockHolder;
      assert.notEqual(record.pidns, ns, 'the lock is the third porter’s now');
      assert.deepEqual(
        bed.api.commands().filter((c) => c.status === 'PROCESSING' || c.status === 'SCHEDULED'),
        [],
        'nothing left PROCESSING',
      );
    } finally {
      held.open();
      heldAgain.open();
      await bed.close();
    }
  });
});
