import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  currentHolder,
  here,
  judgeHolder,
  parseHolder,
  formatHolder,
  renewed,
  type Here,
  type LockHolder,
} from '../../../src/delivery/state/lock-holder.js';

/**
 * How a porter judges the holder porter.lock names: one it can see (same boot, same pid
 * namespace) by its pid and start time, at once; one in another pid namespace (another container
 * on the same volume) or on another host (NFS) cannot be seen, so only its lease can tell: never
 * "gone" because its pid names nothing here.
 */

const linux = process.platform === 'linux';
const me = here();
const BOOT = '11111111-1111-4111-8111-111111111111';
const OTHER_BOOT = '22222222-2222-4222-8222-222222222222';
const where: Here = { pid: process.pid, boot: BOOT, pidns: 'pid:[4026531836]', host: 'node-a', bootedAtMs: 1_700_000_000_000 };

/** A record of a leasing porter (it has a nonce) with a pid that names nothing in this namespace. */
function leasing(fields: Partial<LockHolder>): LockHolder {
  return {
    pid: 2 ** 22 + 7,
    start: '99',
    boot: BOOT,
    pidns: 'pid:[4026531836]',
    host: 'node-a',
    nonce: 'ab'.repeat(12),
    lease: 3,
    at: 1,
    ...fields,
  };
}

describe('the lock record', () => {
  test('round-trips every field, and a renewal advances the lease counter and stamps the time', () => {
    const holder = leasing({});
    assert.deepEqual(parseHolder(formatHolder(holder)), holder);
    assert.deepEqual(renewed(holder, 5000), { ...holder, lease: 4, at: 5000 });
  });

  test('fields of the wrong type are dropped, an older record (a bare pid, or pid, start and boot) still parses', () => {
    assert.deepEqual(parseHolder('{"pid":5,"lease":"x","nonce":7,"pidns":1}'), { pid: 5 });
    assert.deepEqual(parseHolder('42'), { pid: 42 });
    assert.deepEqual(parseHolder('{"pid":5,"start":"1","boot":"b"}'), { pid: 5, start: '1', boot: 'b' });
  });

  test('this process writes its pid namespace, host name and a nonce', { skip: linux ? false : 'needs /proc' }, () => {
    const holder = currentHolder('n0nce', 123);
    assert.match(String(holder.pidns), /^pid:\[\d+\]$/);
    assert.equal(holder.nonce, 'n0nce');
    assert.equal(holder.lease, 0);
    assert.equal(holder.at, 123);
    assert.equal(typeof holder.host, 'string');
  });
});

describe('judging the holder', () => {
  test('in another pid namespace on this boot: unseen (watched), not taken because its pid names nothing here', () => {
    const judged = judgeHolder(leasing({ pidns: 'pid:[4026532999]' }), Date.now(), where);
    assert.equal(judged.verdict, 'unseen');
    assert.match((judged as { why: string }).why, /another pid namespace/);
  });

  test('on another boot id with another host name: unseen, even when its file looks old (clocks of two hosts are not compared)', () => {
    const judged = judgeHolder(leasing({ boot: OTHER_BOOT, host: 'node-b' }), 0, where);
    assert.equal(judged.verdict, 'unseen');
    assert.match((judged as { why: string }).why, /another machine/);
  });

  test('on another boot id, this host name, written before this boot: stale at once (the restart after a crash stays fast)', () => {
    const judged = judgeHolder(leasing({ boot: OTHER_BOOT }), where.bootedAtMs - 60_000, where);
    assert.deepEqual(judged, { verdict: 'stale', reason: 'it was written before this machine restarted' });
  });

  test('on another boot id, this host name, written since this boot: unseen (another host of the same name)', () => {
    assert.equal(judgeHolder(leasing({ boot: OTHER_BOOT }), where.bootedAtMs + 1, where).verdict, 'unseen');
  });

  test('in this pid namespace on this boot: the pid decides at once', { skip: linux ? false : 'needs /proc' }, () => {
    const mine = currentHolder('cd'.repeat(12));
    assert.deepEqual(judgeHolder(mine, Date.now(), me), { verdict: 'alive' });
    const gone = judgeHolder({ ...mine, pid: 2 ** 22 + 3 }, Date.now(), me);
    assert.equal(gone.verdict, 'stale');
    assert.match((gone as { reason: string }).reason, /no longer exists/);
  });

  test('an older record without a lease is judged as before (its pid), wherever it was written', () => {
    const judged = judgeHolder({ pid: 2 ** 22 + 9, start: '1', boot: BOOT }, Date.now(), where);
    assert.equal(judged.verdict, 'stale');
  });
});
