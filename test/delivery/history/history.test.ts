import assert from 'node:assert/strict';
import { appendFileSync, existsSync, readFileSync, renameSync, rmSync, statSync, truncateSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, test } from 'node:test';
import { systemClock } from '../../../src/clock.js';
import { DeliveryHistory } from '../../../src/delivery/history/history.js';
import {
  HistoryReadError,
  nodeHistoryReadFs,
  nodeHistoryWriteFs,
  readHistory,
  type HistoryReadFs,
  type HistoryWriteFs,
} from '../../../src/delivery/history/history-file.js';
import { encodeHistoryRecord } from '../../../src/delivery/history/history-record.js';
import { FakeClock, flush } from '../../helpers/fake-clock.js';
import { FaultyHistoryFs } from '../../helpers/faulty-history-fs.js';
import { waitFor } from '../../helpers/wait-for.js';
import {
  capturingLogger,
  delivery,
  historyBytes,
  historyText,
  idOf,
  numberOf,
  removeAll,
  SERVER_ID,
  sizeOf,
  stateDir,
} from './history-helpers.js';

/**
 * The delivery history on disk: what a record holds, the bound on its two files, what a crash or a
 * failing disk leaves, and a reader that runs while the daemon writes and rotates.
 */

const dirs: string[] = [];
afterEach(() => removeAll(dirs));
const SECRET_TOKEN = 'gci_history_token_5d1e';
const SECRET_PASSWORD = 'rcon-history-pw-77aa';
const scrub = (text: string) => text.split(SECRET_TOKEN).join('[Redacted]').split(SECRET_PASSWORD).join('[Redacted]');

function openHistory(dir: string, options: { maxBytes?: number; files?: HistoryWriteFs; clock?: FakeClock; maxQueuedBytes?: number } = {}) {
  const { logger, lines } = capturingLogger();
  const history = new DeliveryHistory({
    stateDir: dir,
    maxBytes: options.maxBytes ?? 1024 * 1024,
    scrub,
    clock: options.clock ?? systemClock,
    logger,
    ...(options.files ? { files: options.files } : {}),
    ...(options.maxQueuedBytes === undefined ? {} : { maxQueuedBytes: options.maxQueuedBytes }),
  });
  return { history, lines };
}

/** Ids (as delivery numbers) of what the reader returns. */
async function numbers(dir: string, files?: HistoryReadFs): Promise<number[]> {
  return (await readHistory(dir, files)).map((record) => numberOf(record.id));
}

function assertContiguous(found: number[], what: string): void {
  found.forEach((n, index) => assert.equal(n, found[0]! + index, `${what}: not one unbroken, ordered run: ${found.join(',')}`));
}

describe('delivery history records', () => {
  test('one JSON line per delivery: time, server, exact id, command, outcome, answer or reason, ms; secrets scrubbed', async () => {
    const dir = stateDir(dirs);
    const { history } = openHistory(dir);
    history.record(delivery(1, { answer: `§aGave 1 [Diamond] to Steve\nauth ${SECRET_PASSWORD}` }));
    history.record(
      delivery(2, {
        serverName: undefined,
        command: 'give Nobody dirt 1',
        outcome: { result: 'failed', reason: `the game answered: No player was found (token ${SECRET_TOKEN})` },
        failure: 'game-answer',
        ms: 30,
      }),
    );
    history.record(
      delivery(3, { command: undefined, outcome: { result: 'failed', reason: 'not run' }, failure: 'not-run', ms: undefined }),
    );
    await history.close();

    const lines = historyText(dir).split('\n');
    assert.equal(lines.pop(), '', 'the file ends with a whole line');
    assert.deepEqual(
      lines.map((line) => JSON.parse(line) as unknown),
      [
        {
          at: '2026-01-01T00:00:01.000Z',
          serverId: SERVER_ID,
          server: 'survival',
          id: '9007199254740994',
          command: 'give Steve diamond 1',
          outcome: 'executed',
          answer: 'Gave 1 [Diamond] to Steve auth [Redacted]',
          ms: 12,
        },
        {
          at: '2026-01-01T00:00:02.000Z',
          serverId: SERVER_ID,
          id: '9007199254740995',
          command: 'give Nobody dirt 1',
          outcome: 'failed',
          why: 'game-answer',
          reason: 'the game answered: No player was found (token [Redacted])',
          ms: 30,
        },
        {
          at: '2026-01-01T00:00:03.000Z',
          serverId: SERVER_ID,
          server: 'survival',
          id: idOf(3),
          outcome: 'failed',
          why: 'not-run',
          reason: 'not run',
          ms: null,
        },
      ],
    );
    assert.equal(statSync(join(dir, 'history.jsonl')).mode & 0o777, 0o600);
  });

  test('long texts are cut after the secrets are scrubbed, so no part of a secret is left', async () => {
    const dir = stateDir(dirs);
    const { history } = openHistory(dir);
    // The password straddles the 500-code-point cut of an answer.
    history.record(delivery(1, { answer: `${'x'.repeat(495)}${SECRET_PASSWORD}`, command: `say ${'€'.repeat(2000)}` }));
    await history.close();
    const [record] = await readHistory(dir);
    assert.ok(record);
    assert.ok(!JSON.stringify(record).includes(SECRET_PASSWORD.slice(0, 6)), 'a piece of the password is left');
    assert.equal(Array.from(record.answer ?? '').length, 500);
    assert.equal(Array.from(record.command ?? '').length, 1000);
    assert.ok(record.command?.endsWith('…'));
  });
  test('a record that cannot be made is lost with an error line, never thrown at the delivery loop', async () => {
    const dir = stateDir(dirs);
    const { history, lines } = openHistory(dir);
    assert.doesNotThrow(() => history.record(delivery(1, { at: Number.NaN })));
    history.record(delivery(2));
    await history.close();
    assert.deepEqual(await numbers(dir), [2]);
    assert.deepEqual(
      lines.filter((l) => l.level === 50).map((l) => l.event),
      ['history.record.failed'],
    );
  });
});

describe('delivery history files', () => {
  test('history.jsonl moves to history.1.jsonl at its bound: the two never hold more than twice maxBytes, and the newest are kept', async () => {
    const dir = stateDir(dirs);
    const maxBytes = 4096;
    let largest = 0;
    let largestFile = 0;
    // Measured after every file operation the writer completes, so no moment between a rename and an append escapes.
    const measuring: HistoryWriteFs = {
      ...nodeHistoryWriteFs,
      open: async (path) => {
        const file = await nodeHistoryWriteFs.open(path);
        return {
          ...file,
          append: async (text) => {
            await file.append(text);
            largest = Math.max(largest, historyBytes(dir));
            largestFile = Math.max(largestFile, sizeOf(path));
          },
        };
      },
      rename: async (from, to) => {
        await nodeHistoryWriteFs.rename(from, to);
        largest = Math.max(largest, historyBytes(dir));
      },
    };
    const { history } = openHistory(dir, { maxBytes, files: measuring });
    const total = 600;
    for (let n = 0; n < total; n++) {
      history.record(delivery(n));
      if (n % 7 === 0) await flush();
    }
    await history.close();
    assert.ok(largestFile <= maxBytes, `history.jsonl held ${largestFile} bytes, over its bound ${maxBytes}`);
    assert.ok(largest <= 2 * maxBytes, `the history held ${largest} bytes, over 2 × ${maxBytes}`);
    assert.ok(largest > maxBytes, 'the test wrote enough to rotate');
    const found = await numbers(dir);
    assert.ok(found.length > 10, `only ${found.length} records kept`);
    assert.equal(found.at(-1), total - 1, 'the newest record is kept');
    assertContiguous(found, 'after rotations');
  });

  test('a line cut short by kill -9, or zeros after a power cut, is skipped; the next porter starts a new line', async () => {
    const dir = stateDir(dirs);
    const first = openHistory(dir).history;
    for (let n = 0; n < 3; n++) first.record(delivery(n));
    await first.close();
    const file = join(dir, 'history.jsonl');
    const whole = historyText(dir).split('\n')[0]!;
    appendFileSync(file, whole.slice(0, 40));
    assert.deepEqual(await numbers(dir), [0, 1, 2], 'a torn last line');
    appendFileSync(file, '\0\0\0\0');
    assert.deepEqual(await numbers(dir), [0, 1, 2], 'zeros where the data had not reached the disk');

    const next = openHistory(dir).history;
    next.record(delivery(3));
    await next.close();
    assert.deepEqual(await numbers(dir), [0, 1, 2, 3]);
  });

  test('a command recorded twice (a crash between the history and the journal) is read once, as first recorded', async () => {
    const dir = stateDir(dirs);
    const { history } = openHistory(dir);
    history.record(delivery(1));
    history.record(delivery(1, { outcome: { result: 'failed', reason: 'outcome unknown' }, failure: 'unknown', ms: undefined }));
    history.record(delivery(2));
    await history.close();
    const records = await readHistory(dir);
    assert.deepEqual(
      records.map((r) => [numberOf(r.id), r.outcome]),
      [
        [1, 'executed'],
        [2, 'executed'],
      ],
    );
  });

  test('a report the API refused for good is read with the command it belongs to, as first recorded', async () => {
    const dir = stateDir(dirs);
    const { history } = openHistory(dir);
    history.record(delivery(1));
    history.record(delivery(2));
    history.record(delivery(1, { reportRefused: '400 VALIDATION_ERROR', ms: undefined }));
    await history.close();
    const records = await readHistory(dir);
    assert.deepEqual(
      records.map((r) => [numberOf(r.id), r.outcome, r.reportRefused, r.ms === null]),
      [
        [1, 'executed', '400 VALIDATION_ERROR', false],
        [2, 'executed', undefined, false],
      ],
    );
  });

  test('history.jsonl deleted or moved away while porter runs: the next records go to a new history.jsonl that porter history reads', async () => {
    const dir = stateDir(dirs);
    const { history } = openHistory(dir);
    const file = join(dir, 'history.jsonl');
    history.record(delivery(0));
    await waitFor(() => sizeOf(file) > 0, { what: 'the first record written' });
    rmSync(file);
    history.record(delivery(1));
    await waitFor(() => existsSync(file) && sizeOf(file) > 0, { what: 'a new history.jsonl' });
    // logrotate's default: the file moved aside under another name, nothing created in its place.
    renameSync(file, join(dir, 'history.jsonl.rotated'));
    history.record(delivery(2));
    history.record(delivery(3));
    await history.close();
    assert.deepEqual(await numbers(dir), [2, 3]);
    assert.deepEqual(readFileSync(join(dir, 'history.jsonl.rotated'), 'utf8').trim().split('\n').map(recordNumber), [1]);
  });

  test('history.jsonl truncated in place (logrotate copytruncate): it is not moved to history.1.jsonl before it reaches its bound again', async () => {
    const dir = stateDir(dirs);
    const maxBytes = 4096;
    const line = Buffer.byteLength(encodeHistoryRecord(delivery(10), scrub));
    const half = Math.floor(maxBytes / line / 2);
    const { history } = openHistory(dir, { maxBytes });
    const file = join(dir, 'history.jsonl');
    for (let n = 0; n < half; n++) history.record(delivery(n));
    await waitFor(() => historyText(dir).split('\n').length === half + 1, { what: 'half the bound written' });
    truncateSync(file, 0);
    const more = Math.floor((maxBytes / line) * 0.75);
    for (let n = half; n < half + more; n++) {
      history.record(delivery(n));
      if (n % 5 === 0) await flush();
    }
    await history.close();
    assert.ok(!existsSync(join(dir, 'history.1.jsonl')), 'rotated as if the truncated bytes were still there');
    assert.deepEqual(
      await numbers(dir),
      Array.from({ length: more }, (_, i) => half + i),
    );
  });

  test('porter holds at most one history file open while it writes and rotates, and none once stopped', async () => {
    const dir = stateDir(dirs);
    const disk = new FaultyHistoryFs();
    const files = disk.files();
    let most = 0;
    const counting: HistoryWriteFs = {
      ...files,
      open: async (path) => {
        const file = await files.open(path);
        most = Math.max(most, disk.openFiles);
        return file;
      },
    };
    const { history } = openHistory(dir, { maxBytes: 2048, files: counting });
    for (let n = 0; n < 200; n++) {
      history.record(delivery(n));
      if (n % 4 === 0) await flush();
    }
    await history.close();
    assert.ok(existsSync(join(dir, 'history.1.jsonl')), 'the test wrote enough to rotate');
    assert.equal(most, 1, `${most} history files open at once`);
    assert.equal(disk.openFiles, 0, 'a file still open after close()');
  });

  test('a rotation between the reader opening the two files: the reader starts again and sees one ordered history', async () => {
    const dir = stateDir(dirs);
    const { history } = openHistory(dir, { maxBytes: 64 * 1024 });
    for (let n = 0; n < 10; n++) history.record(delivery(n));
    await history.close();
    renameSync(join(dir, 'history.jsonl'), join(dir, 'history.1.jsonl'));
    const writer = openHistory(dir, { maxBytes: 64 * 1024 }).history;
    for (let n = 10; n < 20; n++) writer.record(delivery(n));
    await writer.close();

    let rotations = 0;
    const racing: HistoryReadFs = {
      ...nodeHistoryReadFs,
      open: async (path) => {
        // Just before the reader opens history.1.jsonl (once), the writer rotates and writes on.
        if (path.endsWith('history.1.jsonl') && rotations++ === 0) {
          renameSync(join(dir, 'history.jsonl'), join(dir, 'history.1.jsonl'));
          appendFileSync(join(dir, 'history.jsonl'), historyLine(20));
        }
        return nodeHistoryReadFs.open(path);
      },
    };
    assert.deepEqual(await numbers(dir, racing), [10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20]);
    assert.ok(rotations >= 2, 'the reader opened the files again');
  });

  test('readers running while the writer appends and rotates: every read is one unbroken, ordered run without duplicates', async () => {
    const dir = stateDir(dirs);
    // Nothing is dropped for a disk that lags behind, so any gap in a read would be the reader's.
    const { history } = openHistory(dir, { maxBytes: 8192, maxQueuedBytes: 64 * 1024 * 1024 });
    const reads = 40;
    let done = 0;
    let recorded = 0;
    const writing = (async () => {
      for (; done < reads && recorded < 3000; recorded++) {
        history.record(delivery(recorded));
        if (recorded % 3 === 0) await flush();
      }
      await history.close();
    })();
    const oldest = new Set<number>();
    for (; done < reads; done++) {
      const found = await numbers(dir);
      assertContiguous(found, `read ${done}`);
      if (found.length > 0) oldest.add(found[0]!);
    }
    await writing;
    assert.ok(oldest.size > 2, `the reads saw ${oldest.size - 1} rotations`);
    assertContiguous(await numbers(dir), 'the last read');
  });
});

describe('delivery history on a failing disk', () => {
  test('files the reader may not read: an error naming the directory and what to do', async () => {
    const refused: HistoryReadFs = {
      ...nodeHistoryReadFs,
      open: () => Promise.reject(Object.assign(new Error('EACCES: permission denied'), { code: 'EACCES' })),
    };
    await assert.rejects(
      readHistory('/var/lib/porter', refused),
      (error: unknown) =>
        error instanceof HistoryReadError &&
        error.message ===
          "cannot read the delivery history in /var/lib/porter (EACCES): run this as a user who may read the state directory (porter's own user, or root with sudo)",
    );
  });

  test('a disk that refuses writes: one error line, records held, all written in order once the disk takes them', async () => {
    const dir = stateDir(dirs);
    const clock = new FakeClock();
    const disk = new FaultyHistoryFs();
    disk.refuseWith = 'ENOSPC';
    const { history, lines } = openHistory(dir, { files: disk.files(), clock });
    for (let n = 0; n < 3; n++) history.record(delivery(n));
    await waitFor(() => clock.sleeping === 1, { what: 'the writer waiting to try again' });
    for (let n = 3; n < 5; n++) history.record(delivery(n));
    // Each try is one operation (the file's size is read again first, and that fails too).
    for (let round = 0; round < 3; round++) {
      clock.advance(30_000);
      await waitFor(() => clock.sleeping === 1 && disk.ops === round + 2, { what: `failed try ${round + 2}` });
    }
    const errors = lines.filter((line) => line.level === 50);
    assert.deepEqual(
      errors.map((line) => line.event),
      ['history.write.failed'],
      'one error line for the whole episode',
    );
    assert.equal(errors[0]!.err, 'ENOSPC');

    disk.refuseWith = undefined;
    clock.advance(30_000);
    await waitFor(() => historyText(dir).split('\n').length === 6, { what: 'the held records written' });
    assert.deepEqual(await numbers(dir), [0, 1, 2, 3, 4]);
    assert.ok(lines.some((line) => line.event === 'history.written' && line.level === 30));
    await history.close();
  });

  test('an append that fails part-way: the fragment is skipped and no record is lost or doubled', async () => {
    const dir = stateDir(dirs);
    const clock = new FakeClock();
    // Operation 0 inspects the file, 1 opens it, 2 appends: it writes part of its bytes, then the disk fills.
    const disk = new FaultyHistoryFs({ failAt: new Map([[2, 'ENOSPC']]), tornFraction: 0.3 });
    const { history } = openHistory(dir, { files: disk.files(), clock });
    history.record(delivery(0));
    history.record(delivery(1));
    await waitFor(() => clock.sleeping === 1, { what: 'the failed append' });
    clock.advance(30_000);
    await history.close();
    assert.deepEqual(await numbers(dir), [0, 1]);
  });

  test('a disk that does not keep up: the oldest queued records are dropped with one counted warning, the newest written', async () => {
    const dir = stateDir(dirs);
    const disk = new FaultyHistoryFs();
    disk.stall();
    const line = Buffer.byteLength(encodeHistoryRecord(delivery(10), scrub));
    const { history, lines } = openHistory(dir, { files: disk.files(), maxQueuedBytes: 4 * line });
    for (let n = 0; n < 20; n++) history.record(delivery(n));
    assert.deepEqual(
      lines.filter((l) => l.level === 40).map((l) => l.event),
      ['history.dropping'],
    );
    disk.release();
    await history.close();
    assert.deepEqual(await numbers(dir), [16, 17, 18, 19]);
    assert.equal(lines.find((l) => l.event === 'history.caughtup')?.dropped, 16);
  });

  test('stopping while the disk hangs waits a bounded time and says how many records were not written', async () => {
    const dir = stateDir(dirs);
    const clock = new FakeClock();
    const disk = new FaultyHistoryFs();
    disk.stall();
    const { history, lines } = openHistory(dir, { files: disk.files(), clock });
    history.record(delivery(0));
    history.record(delivery(1));
    const closing = history.close();
    await waitFor(() => clock.sleeping === 1, { what: 'the bounded wait' });
    clock.advance(2_000);
    await closing;
    const warnings = lines.filter((l) => l.level === 40);
    assert.deepEqual(
      warnings.map((l) => l.event),
      ['history.unwritten'],
    );
    assert.equal(warnings[0]!.unwritten, 2);
  });
});

function recordNumber(line: string): number {
  return numberOf((JSON.parse(line) as { id: string }).id);
}

function historyLine(n: number): string {
  return `${JSON.stringify({ at: new Date(Date.UTC(2026, 0, 1) + n * 1000).toISOString(), serverId: SERVER_ID, id: idOf(n), command: `give Steve diamond ${n}`, outcome: 'executed', ms: 1 })}\n`;
}
