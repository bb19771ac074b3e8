import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import * as fs from 'node:fs';
import { join } from 'node:path';
import { FakeClock, flush } from '../../helpers/fake-clock.js';
import { scratchDirs } from '../../helpers/scratch-dirs.js';
import { formatHolder, parseHolder, type LockHolder } from '../../../src/delivery/state/lock-holder.js';
import { LEASE, StateLease } from '../../../src/delivery/state/state-lease.js';

/**
 * The holder's side of the lease: it refreshes its record on the injected clock, stops
 * claiming once its last good refresh is too old by its own clock (a freeze, a failing disk), and
 * stops for good, at once, when porter.lock names someone else.
 */

const scratch = scratchDirs('porter-lease-', 'each');
const HOLDER: LockHolder = { pid: process.pid, host: 'node-a', pidns: 'pid:[1]', nonce: 'ef'.repeat(12), lease: 0, at: 0 };

function setUp(files?: ConstructorParameters<typeof StateLease>[0]['files']) {
  const path = join(scratch(), 'porter.lock');
  writeFileSync(path, formatHolder(HOLDER));
  const clock = new FakeClock();
  const lost: string[] = [];
  const failed: Error[] = [];
  const lease = new StateLease({
    path,
    holder: HOLDER,
    clock,
    onLost: (reason) => lost.push(reason),
    onFailed: (error) => failed.push(error),
    ...(files && { files }),
  });
  const record = () => parseHolder(readFileSync(path, 'utf8'))!;
  return { path, clock, lease, lost, failed, record };
}

describe('the state lease, held', () => {
  test('refreshes every 2 s: the counter advances, the nonce stays; open throughout', async () => {
    const { clock, lease, record } = setUp();
    lease.start();
    for (let step = 1; step <= 5; step++) {
      clock.advance(LEASE.refreshMs);
      await flush();
      assert.equal(record().lease, step);
      assert.equal(record().nonce, HOLDER.nonce);
      assert.equal(lease.isOpen(), true);
    }
    lease.stop();
  });

  test('frozen past the lease and thawed: shut until the record is checked and refreshed again, then open', async () => {
    const { clock, lease, record } = setUp();
    lease.start();
    // The freeze: time jumps; the first thing this process can ask after it is whether it may claim.
    clock.advance(LEASE.watchMs + 5_000);
    assert.equal(lease.isOpen(), false, 'no pull may be sent on a lease not confirmed since the thaw');
    const opened = lease.waitOpen(new AbortController().signal);
    await flush();
    await opened;
    assert.equal(lease.isOpen(), true);
    assert.equal(record().lease, 1);
    lease.stop();
  });

  test('frozen past the lease while another porter took over: lost at once, shut for good, the other record untouched', async () => {
    const { path, clock, lease, lost, record } = setUp();
    lease.start();
    const other: LockHolder = { pid: 7, host: 'node-b', pidns: 'pid:[2]', nonce: '01'.repeat(12), lease: 4, at: 9 };
    writeFileSync(`${path}.other`, formatHolder(other));
    renameSync(`${path}.other`, path);
    clock.advance(LEASE.watchMs + 5_000);
    assert.equal(lease.isOpen(), false);
    await flush();
    assert.equal(lost.length, 1);
    assert.match(lost[0]!, /now names pid 7, on host node-b, in pid namespace pid:\[2\]/);
    assert.deepEqual(record(), other, 'the new holder keeps its record');
    assert.equal(lease.isOpen(), false);
    clock.advance(LEASE.refreshMs * 5);
    await flush();
    assert.deepEqual(record(), other, 'no refresh after the loss');
    assert.equal(lost.length, 1);
  });

  test('a record of its own nonce with another counter (a stale copy put back) is lost too', () => {
    const { path, lease, lost } = setUp();
    writeFileSync(path, formatHolder({ ...HOLDER, lease: 9 }));
    assert.equal(lease.refresh(), false);
    assert.equal(lost.length, 1);
  });

  test('the file gone: lost (another porter may be moving it aside to take over)', () => {
    const { path, lease, lost } = setUp();
    fs.unlinkSync(path);
    assert.equal(lease.refresh(), false);
    assert.match(lost[0]!, /is gone/);
  });

  test('refreshes that fail (a write error) stop claims once the last good one is 6 s old; a good one opens again', async () => {
    let broken = true;
    const files = {
      ...fs,
      renameSync: (from: fs.PathLike, to: fs.PathLike) => {
        if (broken) throw Object.assign(new Error('EIO: i/o error, rename'), { code: 'EIO' });
        fs.renameSync(from, to);
      },
    };
    const { clock, lease, failed, lost, record } = setUp(files);
    lease.start();
    for (let elapsed = LEASE.refreshMs; elapsed < LEASE.claimWithinMs; elapsed += LEASE.refreshMs) {
      clock.advance(LEASE.refreshMs);
      await flush();
      assert.equal(lease.isOpen(), true, `still within the claim window after ${elapsed} ms`);
    }
    clock.advance(LEASE.refreshMs);
    await flush();
    assert.equal(lease.isOpen(), false, 'shut: the last good refresh is 6 s old');
    assert.equal(failed.length, 1, 'told once, not on every failed try');
    assert.equal(lost.length, 0);
    assert.equal(record().lease, 0);
    broken = false;
    clock.advance(LEASE.refreshMs);
    await flush();
    assert.equal(lease.isOpen(), true);
    assert.equal(record().lease, 1);
    lease.stop();
  });

  test('the claim window closes well before a contender may judge the holder gone', () => {
    assert.ok(LEASE.claimWithinMs + 2 * LEASE.refreshMs <= LEASE.watchMs - 5_000, JSON.stringify(LEASE));
  });
});
