import assert from 'node:assert/strict';
import { appendFileSync, symlinkSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import * as fs from 'node:fs';
import { scratchDirs } from '../../helpers/scratch-dirs.js';
import type { JournalFs } from '../../../src/delivery/journal/journal-fs.js';
import { Journal, LOG_RECORDS_PER_SNAPSHOT, readJournal } from '../../../src/delivery/journal/journal.js';
import { FaultyFs } from '../../helpers/faulty-fs.js';

const server = '1b4e28ba-2fa1-11d2-883f-0016d3cca427';
const stateDir = scratchDirs('porter-journal-', 'each');

describe('journal', () => {
  test('claims and outcomes of one turn share one write and one sync, and none is told durable before it', async () => {
    const dir = stateDir();
    const events: string[] = [];
    const files: JournalFs = {
      ...fs,
      fdatasyncSync: (fd) => {
        events.push('sync');
        fs.fdatasyncSync(fd);
      },
    };
    const journal = new Journal(dir, { files });
    await journal.claim(server, '0', 'say zero', 1);
    events.length = 0;
    const claims = Array.from({ length: 1000 }, (_, i) =>
      journal.claim(server, String(i + 1), `say ${i + 1}`, 2).then(() => events.push('durable')),
    );
    const outcome = journal.recordOutcome(server, '0', { result: 'done' }, 2).then(() => events.push('durable'));
    await Promise.all([...claims, outcome]);
    assert.equal(events.filter((e) => e === 'sync').length, 1, 'one sync for the whole turn');
    assert.equal(events[0], 'sync', 'a caller was told durable before the sync');
    const reopened = new Journal(dir);
    assert.equal(reopened.pending(server).length, 1001);
    assert.deepEqual(reopened.recall(server, '0', 3), {
      kind: 'pending',
      entry: { serverId: server, id: '0', command: 'say zero', claimedAt: 1, outcome: { result: 'done' }, outcomeAt: 2 },
    });
  });

  test('a turn whose write fails tells every caller of it', async () => {
    const dir = stateDir();
    const disk = new FaultyFs();
    const journal = new Journal(dir, { files: disk.files() });
    disk.refuseWith = 'EIO';
    const results = await Promise.allSettled([journal.claim(server, '1', 'say one', 1), journal.claim(server, '2', 'say two', 1)]);
    assert.deepEqual(
      results.map((r) => r.status === 'rejected' && (r.reason as { code?: string }).code),
      ['E_JOURNAL_WRITE', 'E_JOURNAL_WRITE'],
    );
    assert.equal(journal.writable, false);
  });

  test('a claim survives a restart and is pending until settled', async () => {
    const dir = stateDir();
    await new Journal(dir).claim(server, '9007199254740993', 'give Steve diamond 1', 1000);
    const reopened = new Journal(dir);
    assert.deepEqual(reopened.pending(server), [
      { serverId: server, id: '9007199254740993', command: 'give Steve diamond 1', claimedAt: 1000 },
    ]);
    reopened.settle(server, '9007199254740993', 3);
    assert.deepEqual(reopened.pending(), [], 'settled at once in memory');
    reopened.flush();
    assert.deepEqual(new Journal(dir).pending(), []);
  });

  test('a settled entry reaches the disk with the next claim, without a write of its own', async () => {
    const dir = stateDir();
    const journal = new Journal(dir);
    await journal.claim(server, '1', 'say one', 1);
    await journal.recordOutcome(server, '1', { result: 'done' }, 2);
    journal.settle(server, '1', 3);
    assert.equal(readJournal(dir).length, 1, 'not written yet: a crash now reports it again, which the API answers as already settled');
    await journal.claim(server, '2', 'say two', 3);
    assert.deepEqual(
      readJournal(dir).map((e) => e.id),
      ['2'],
    );
  });

  test('an outcome is kept with its claim and read back after a restart', async () => {
    const dir = stateDir();
    const journal = new Journal(dir);
    await journal.claim(server, '7', 'say hi', 1);
    await journal.recordOutcome(server, '7', { result: 'failed', reason: 'the game answered: No player was found' }, 2);
    const [entry] = new Journal(dir).pending(server);
    assert.deepEqual(entry?.outcome, { result: 'failed', reason: 'the game answered: No player was found' });
    assert.equal(entry?.outcomeAt, 2);
  });

  test('entries of different servers are kept apart', async () => {
    const dir = stateDir();
    const journal = new Journal(dir);
    await journal.claim(server, '1', 'a', 1);
    await journal.claim('00000000-0000-0000-0000-000000000002', '1', 'b', 1);
    assert.equal(journal.pending(server).length, 1);
    assert.equal(journal.pending().length, 2);
  });

  test('the disk holds the claim as soon as claim() returns, for a reader that writes nothing', async () => {
    const dir = stateDir();
    const journal = new Journal(dir);
    await journal.claim(server, '42', 'give Alex emerald 3', 5);
    const before = listing(dir);
    assert.deepEqual(
      readJournal(dir).map((e) => e.id),
      ['42'],
    );
    assert.deepEqual(listing(dir), before, 'readJournal changed the state directory');
  });

  test('a claim cut short by a crash at the end of the log is dropped; the records before it stand', async () => {
    const dir = stateDir();
    const journal = new Journal(dir);
    await journal.claim(server, '1', 'say one', 1);
    await journal.recordOutcome(server, '1', { result: 'done' }, 2);
    appendFileSync(logOf(dir), '{"op":"claim","serverId":"' + server + '","id":"2","comm');
    const entries = new Journal(dir).pending();
    assert.deepEqual(
      entries.map((e) => [e.id, e.outcome?.result]),
      [['1', 'done']],
    );
  });

  test('zeros where a crash left unwritten data at the end are dropped too', async () => {
    const dir = stateDir();
    await new Journal(dir).claim(server, '1', 'say one', 1);
    appendFileSync(logOf(dir), Buffer.alloc(300));
    assert.deepEqual(
      new Journal(dir).pending().map((e) => e.id),
      ['1'],
    );
  });

  test('a damaged line in the middle of the log stops the start with the file and line named, and changes nothing', async () => {
    const dir = stateDir();
    const journal = new Journal(dir);
    await journal.claim(server, '1', 'say one', 1);
    const log = logOf(dir);
    const good = readFileSync(log, 'utf8');
    writeFileSync(log, `not json\n${good}`);
    const before = listing(dir);
    assert.throws(
      () => new Journal(dir),
      (error: Error & { code?: string }) => {
        assert.equal(error.code, 'E_JOURNAL_READ');
        assert.ok(error.message.includes(`${log} is damaged at line 1`), error.message);
        assert.match(error.message, /settle them from the store dashboard/);
        return true;
      },
    );
    assert.deepEqual(listing(dir), before);
    assert.equal(readFileSync(log, 'utf8'), `not json\n${good}`);
  });

  test('the log is folded into the snapshot every LOG_RECORDS_PER_SNAPSHOT records, and nothing is lost across the fold', async () => {
    const dir = stateDir();
    const journal = new Journal(dir);
    // Every delivery writes a claim and an outcome; the settle rides on the next claim.
    const deliveries = LOG_RECORDS_PER_SNAPSHOT + 10;
    for (let i = 0; i < deliveries; i++) {
      if (i > 0) journal.settle(server, String(i - 1), i);
      await journal.claim(server, String(i), `say ${i}`, i);
      await journal.recordOutcome(server, String(i), { result: 'done' }, i);
    }
    const logs = readdirSync(dir).filter((name) => name.endsWith('.log'));
    assert.equal(logs.length, 1, `one log at a time, got ${logs.join(', ')}`);
    assert.ok(readFileSync(join(dir, logs[0]!), 'utf8').split('\n').length < LOG_RECORDS_PER_SNAPSHOT, 'the log was not folded');
    assert.deepEqual(
      new Journal(dir).pending().map((e) => [e.id, e.outcome?.result]),
      [[String(deliveries - 1), 'done']],
    );
  });

  test('a journal.json porter did not write stops the start with the file named, and changes nothing', () => {
    const dir = stateDir();
    writeFileSync(join(dir, 'journal.json'), JSON.stringify({ [`${server}/5`]: { id: '5' } }));
    const before = listing(dir);
    assert.throws(
      () => new Journal(dir),
      (error: Error & { code?: string }) => {
        assert.equal(error.code, 'E_JOURNAL_READ');
        assert.ok(error.message.includes(join(dir, 'journal.json')), error.message);
        return true;
      },
    );
    assert.deepEqual(listing(dir), before);
  });

  test('a settled id is remembered with its outcome across restarts, and is no longer pending', async () => {
    const dir = stateDir();
    const journal = new Journal(dir, { now: () => 4 });
    await journal.claim(server, '12', 'give Steve diamond 1', 1);
    await journal.recordOutcome(server, '12', { result: 'failed', reason: 'the game answered: No player was found' }, 2);
    journal.settle(server, '12', 3);
    journal.flush();
    const reopened = new Journal(dir, { now: () => 4 });
    assert.deepEqual(reopened.pending(), []);
    const recall = reopened.recall(server, '12', 4);
    assert.equal(recall?.kind, 'settled');
    assert.deepEqual(recall?.kind === 'settled' ? recall.settled.outcome : undefined, {
      result: 'failed',
      reason: 'the game answered: No player was found',
    });
    assert.equal(reopened.recall('00000000-0000-0000-0000-000000000002', '12', 4), undefined, 'remembered per server');
  });

  test('the settled-id memory is bounded in count per server and in age, across snapshots', async () => {
    const dir = stateDir();
    const limits = { maxPerServer: 3, maxAgeMs: 1000 };
    const journal = new Journal(dir, { settledLimits: limits, now: () => 10 });
    for (let i = 0; i < 5; i++) {
      await journal.claim(server, String(i), `say ${i}`, i);
      await journal.recordOutcome(server, String(i), { result: 'done' }, i);
      journal.settle(server, String(i), i);
    }
    journal.flush();
    assert.deepEqual(
      ['0', '1', '2', '3', '4'].map((id) => journal.recall(server, id, 10)?.kind),
      [undefined, undefined, 'settled', 'settled', 'settled'],
    );
    assert.equal(journal.recall(server, '4', 4 + 1001), undefined, 'older than the age bound');
    const reopened = new Journal(dir, { settledLimits: limits, now: () => 10 });
    assert.deepEqual(
      ['1', '2', '4'].map((id) => reopened.recall(server, id, 10)?.kind),
      [undefined, 'settled', 'settled'],
    );
    const later = new Journal(dir, { settledLimits: limits, now: () => 5000 });
    assert.equal(later.recall(server, '4', 10), undefined, 'aged out when the snapshot was written');
  });

  test('a crash between writing a new snapshot and starting its log: the old log is ignored and removed', () => {
    const dir = stateDir();
    const entry = { serverId: server, id: '3', command: 'say three', claimedAt: 1 };
    writeFileSync(join(dir, 'journal.json'), JSON.stringify({ generation: 2, entries: { [`${server}/3`]: entry } }));
    // Log 1 was folded into snapshot 2 already; replaying it again would resurrect settled commands.
    writeFileSync(join(dir, 'journal-1.log'), `${JSON.stringify({ op: 'claim', serverId: server, id: '1', at: 0 })}\n`);
    assert.deepEqual(new Journal(dir).pending(), [entry]);
    assert.ok(!readdirSync(dir).includes('journal-1.log'));
  });

  test('a failed write throws a clear error, keeps the state in memory, and the next write makes all of it durable', async () => {
    const dir = stateDir();
    // The disk fills up after the start: every write fails with ENOSPC until space is freed.
    // (Not a link to /dev/full: porter refuses a device in place of a journal file outright.)
    const disk = new FaultyFs();
    const journal = new Journal(dir, { files: disk.files() });
    assert.equal(journal.writable, true);
    disk.refuseWith = 'ENOSPC';
    await assert.rejects(journal.claim(server, '1', 'say one', 1), (error: Error & { code?: string }) => {
      assert.equal(error.code, 'E_JOURNAL_WRITE');
      assert.match(error.message, /ENOSPC.*check that the state directory is writable and the disk is not full/);
      return true;
    });
    assert.equal(journal.writable, false);
    assert.equal(journal.writeFailures, 1);
    assert.deepEqual(
      journal.pending().map((e) => e.id),
      ['1'],
      'the caller reports it failed from memory',
    );
    assert.ok(journal.lastWriteError);
    disk.refuseWith = undefined;
    await journal.claim(server, '2', 'say two', 2);
    assert.equal(journal.writable, true);
    assert.deepEqual(
      new Journal(dir).pending().map((e) => e.id),
      ['1', '2'],
    );
  });

  test('tryRecover makes a journal that could not be written at start writable again', async () => {
    const dir = stateDir();
    symlinkSync('/dev/full', join(dir, '.journal.json.tmp'));
    const journal = new Journal(dir);
    assert.equal(journal.writable, false, 'the snapshot at start could not be written');
    assert.equal(journal.tryRecover(), false);
    rmSync(join(dir, '.journal.json.tmp'));
    assert.equal(journal.tryRecover(), true);
    await journal.claim(server, '1', 'say one', 1);
    assert.deepEqual(
      new Journal(dir).pending().map((e) => e.id),
      ['1'],
    );
  });
});

function logOf(dir: string): string {
  const logs = readdirSync(dir).filter((name) => /^journal-\d+\.log$/.test(name));
  assert.equal(logs.length, 1, `expected one log in ${dir}, got ${logs.join(', ')}`);
  return join(dir, logs[0]!);
}

function listing(dir: string): Record<string, string> {
  return Object.fromEntries(readdirSync(dir).map((name) => [name, readFileSync(join(dir, name), 'utf8')]));
}
