import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FakeClock, runClockUntil } from '../../helpers/fake-clock.js';
import { scratchDirs } from '../../helpers/scratch-dirs.js';
import { ConfigError } from '../../../src/errors.js';
import { formatHolder, here, renewed, type LockHolder } from '../../../src/delivery/state/lock-holder.js';
import { LEASE } from '../../../src/delivery/state/state-lease.js';
import { LOCK_FILE, lockStateDir, type StateLock } from '../../../src/delivery/state/state-lock.js';

/**
 * The contender's side: porter.lock names a porter in another pid namespace (another
 * container on the volume), whose pid means nothing here. Today's porter took it over at once and
 * rotated the journal under a live holder. Now it watches the record for one watch period on its
 * clock: any change is a live holder, refused with 78 naming it and how to find it; no change at all
 * is a holder gone, taken over with state.lock.takeover. The kernel lock is switched off, as it is
 * in another network namespace.
 */

const scratch = scratchDirs('porter-lock-watch-', 'each');
const unsupported = async () => ({ state: 'unsupported' }) as const;
const elsewhere: LockHolder = {
  pid: 1,
  start: '17',
  boot: here().boot ?? 'b00t',
  pidns: 'pid:[4026599999]',
  host: 'porter-old-pod',
  nonce: 'aa'.repeat(12),
  lease: 41,
  at: 1_700_000_000_000,
};

function capture() {
  const lines: Array<{ obj: Record<string, unknown>; msg: string }> = [];
  return { lines, logger: { info: (obj: Record<string, unknown>, msg: string) => void lines.push({ obj, msg }) } };
}

function start(record: LockHolder) {
  const dir = scratch();
  const path = join(dir, LOCK_FILE);
  writeFileSync(path, formatHolder(record));
  const clock = new FakeClock();
  const { lines, logger } = capture();
  let outcome: StateLock | Error | undefined;
  lockStateDir(dir, { clock, logger, kernelLock: unsupported }).then(
    (lock) => (outcome = lock),
    (error: Error) => (outcome = error),
  );
  return { dir, path, clock, lines, outcome: () => outcome };
}

describe('a holder this porter cannot see (another pid namespace)', () => {
  test('its lease advancing: refused with 78, naming it, where it runs and how to tell, without touching its record', async () => {
    const { dir, path, clock, lines, outcome } = start(elsewhere);
    let record = elsewhere;
    let nextRefresh = clock.now() + LEASE.refreshMs;
    await runClockUntil(
      clock,
      () => outcome() !== undefined,
      LEASE.watchMs * 2,
      () => {
        // The holder in the other container refreshes every 2 s of its time.
        if (clock.now() >= nextRefresh) {
          record = renewed(record, record.at! + LEASE.refreshMs);
          writeFileSync(path, formatHolder(record));
          nextRefresh += LEASE.refreshMs;
        }
      },
    );
    const error = outcome();
    assert.ok(error instanceof ConfigError, 'refused with a ConfigError');
    assert.equal(error.exitCode, 78);
    assert.match(
      error.message,
      new RegExp(
        `^state directory ${dir} is in use by another porter process \\(pid 1, on host porter-old-pod, in pid namespace pid:\\[4026599999\\], lease 4\\d refreshed at \\S+ by its clock\\): stop it, or give this instance its own stateDir\\. It runs where this porter cannot see it \\(it runs in another pid namespace`,
      ),
    );
    assert.match(error.message, /find it on host porter-old-pod .*or watch the "lease" counter in \S+porter\.lock advance every 2 s/);
    assert.ok(clock.now() - 1_700_000_000_000 <= LEASE.refreshMs * 2, 'refused as soon as a change is seen, not after the whole watch');
    assert.deepEqual(JSON.parse(readFileSync(path, 'utf8')), record, 'the holder keeps its lock');
    assert.deepEqual(
      lines.map((l) => l.obj.event),
      ['state.lock.watching'],
    );
  });

  test('its record unchanged for the whole watch: taken over, with the reason, not a moment before', async () => {
    const { path, clock, lines, outcome } = start(elsewhere);
    const began = clock.now();
    let earliest: number | undefined;
    await runClockUntil(
      clock,
      () => outcome() !== undefined,
      LEASE.watchMs * 2,
      () => {
        if (outcome() !== undefined && earliest === undefined) earliest = clock.now();
      },
    );
    const lock = outcome();
    assert.ok(lock !== undefined && !(lock instanceof Error), lock instanceof Error ? lock.message : 'not settled');
    assert.ok(clock.now() - began >= LEASE.watchMs, `taken after ${clock.now() - began} ms of watching`);
    const mine = JSON.parse(readFileSync(path, 'utf8')) as LockHolder;
    assert.equal(mine.pid, process.pid);
    assert.deepEqual(
      lines.map((l) => l.obj.event),
      ['state.lock.watching', 'state.lock.takeover'],
    );
    assert.deepEqual(lines[1]!.obj.previousHolder, elsewhere);
    assert.match(
      String(lines[1]!.obj.reason),
      /did not change for 15 s of watching: it runs in another pid namespace .*stopped refreshing its lease/,
    );
    lock.release();
  });
});
