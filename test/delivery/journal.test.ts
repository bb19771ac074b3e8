import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, test } from 'node:test';
import { Journal } from '../../src/delivery/journal.js';
import { lockStateDir } from '../../src/delivery/state-lock.js';

const server = '1b4e28ba-2fa1-11d2-883f-0016d3cca427';
const dirs: string[] = [];
function stateDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'porter-journal-'));
  dirs.push(dir);
  return dir;
}
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('journal', () => {
  test('a claim survives a restart and is pending until settled', () => {
    const dir = stateDir();
    new Journal(dir).claim(server, '9007199254740993', 'give Steve diamond 1', 1000);
    const reopened = new Journal(dir);
    assert.deepEqual(reopened.pending(server), [{ serverId: server, id: '9007199254740993', command: 'give Steve diamond 1', claimedAt: 1000 }]);
    reopened.settle(server, '9007199254740993');
    assert.deepEqual(reopened.pending(), [], 'settled at once in memory');
    reopened.flush();
    assert.deepEqual(new Journal(dir).pending(), []);
  });

  test('a settled entry reaches the disk with the next claim, without a write of its own', () => {
    const dir = stateDir();
    const journal = new Journal(dir);
    journal.claim(server, '1', 'say one', 1);
    journal.recordOutcome(server, '1', { result: 'done' }, 2);
    journal.settle(server, '1');
    assert.equal(new Journal(dir).pending().length, 1, 'not written yet: a crash now reports it again, which the API answers as already settled');
    journal.claim(server, '2', 'say two', 3);
    assert.deepEqual(new Journal(dir).pending().map((e) => e.id), ['2']);
  });

  test('an outcome is kept with its claim and read back after a restart', () => {
    const dir = stateDir();
    const journal = new Journal(dir);
    journal.claim(server, '7', 'say hi', 1);
    journal.recordOutcome(server, '7', { result: 'failed', reason: 'the game answered: No player was found' }, 2);
    const [entry] = new Journal(dir).pending(server);
    assert.deepEqual(entry?.outcome, { result: 'failed', reason: 'the game answered: No player was found' });
    assert.equal(entry?.outcomeAt, 2);
  });

  test('entries of different servers are kept apart', () => {
    const dir = stateDir();
    const journal = new Journal(dir);
    journal.claim(server, '1', 'a', 1);
    journal.claim('00000000-0000-0000-0000-000000000002', '1', 'b', 1);
    assert.equal(journal.pending(server).length, 1);
    assert.equal(journal.pending().length, 2);
  });

  test('the file on disk holds the claim as soon as claim() returns', () => {
    const dir = stateDir();
    const journal = new Journal(dir);
    journal.claim(server, '42', 'give Alex emerald 3', 5);
    const onDisk = JSON.parse(readFileSync(journal.path, 'utf8')) as Record<string, { id: string }>;
    assert.equal(Object.values(onDisk)[0]?.id, '42');
  });

  test('recording an outcome without a claim is refused', () => {
    const journal = new Journal(stateDir());
    assert.throws(() => journal.recordOutcome(server, '1', { result: 'done' }, 1), { code: 'E_JOURNAL_WRITE' });
  });
});

describe('state directory lock', () => {
  test('a second lock on a directory held by a live process is refused with a clear error', () => {
    const dir = stateDir();
    const release = lockStateDir(dir);
    // The current process holds it; pretend another live process (our parent) does instead.
    writeLockHolder(dir, process.ppid);
    assert.throws(() => lockStateDir(dir), /in use by another porter process/);
    release();
  });

  test('a lock left by a dead process is taken over', () => {
    const dir = stateDir();
    writeLockHolder(dir, 2 ** 22 + 12345); // above the default pid_max: no such process
    const release = lockStateDir(dir);
    assert.equal(readFileSync(join(dir, 'porter.lock'), 'utf8'), String(process.pid));
    release();
  });
});

function writeLockHolder(dir: string, pid: number): void {
  rmSync(join(dir, 'porter.lock'), { force: true });

  writeFileSync(join(dir, 'porter.lock'), String(pid));
}
