import assert from 'node:assert/strict';
import { join } from 'node:path';
import { afterEach, describe, test } from 'node:test';
import fc from 'fast-check';
import { DeliveryHistory } from '../../../src/delivery/history/history.js';
import { readHistory } from '../../../src/delivery/history/history-file.js';
import { fcOptions } from '../../helpers/fc-options.js';
import { FakeClock, flush } from '../../helpers/fake-clock.js';
import { waitFor } from '../../helpers/wait-for.js';
import { FaultyHistoryFs } from '../../helpers/faulty-history-fs.js';
import { capturingLogger, delivery, numberOf, removeAll, sizeOf, stateDir } from './history-helpers.js';

/**
 * Whatever happens to the porters that write one state directory's history in turn — records
 * written in bursts, rotations, a disk refusing a write (after writing part of it), a process
 * killed at any file operation (leaving part of an append) — the reader parses what is left
 * without throwing, and returns records in the order they were recorded, none twice, each one a
 * record that was really made; the two files stay within their bound.
 */

const dirs: string[] = [];
afterEach(() => removeAll(dirs));

interface Life {
  readonly records: number;
  /** The writer gets a turn of the event loop after every this many records. */
  readonly yieldEvery: number;
  /** The file operation (numbered from the life's start) the disk refuses, part-written. */
  readonly failAt: number | null;
  /** The file operation at which the process dies. */
  readonly dieAt: number | null;
  readonly tornFraction: number;
}

const life: fc.Arbitrary<Life> = fc.record({
  records: fc.integer({ min: 0, max: 25 }),
  yieldEvery: fc.integer({ min: 1, max: 6 }),
  failAt: fc.option(fc.integer({ min: 0, max: 12 })),
  dieAt: fc.option(fc.integer({ min: 0, max: 16 })),
  tornFraction: fc.double({ min: 0, max: 1, noNaN: true }),
});

/** One porter's life on the directory: it records, then stops (or is found dead by then). */
async function live(dir: string, plan: Life, maxBytes: number, first: number): Promise<void> {
  const disk = new FaultyHistoryFs({
    ...(plan.failAt === null ? {} : { failAt: new Map([[plan.failAt, 'ENOSPC']]) }),
    ...(plan.dieAt === null ? {} : { dieAt: plan.dieAt }),
    tornFraction: plan.tornFraction,
  });
  const clock = new FakeClock();
  const history = new DeliveryHistory({
    stateDir: dir,
    maxBytes,
    scrub: (t) => t,
    clock,
    logger: capturingLogger().logger,
    files: disk.files(),
  });
  for (let n = 0; n < plan.records; n++) {
    history.record(delivery(first + n));
    if (n % plan.yieldEvery === 0) await flush();
  }
  // A process that dies at an operation never finishes stopping: wait until it is dead instead.
  const stopping = history.close();
  if (plan.dieAt === null) {
    await stopping;
    assert.equal(disk.openFiles, 0, 'a history file left open by a porter that stopped');
  } else await Promise.race([stopping, waitFor(() => disk.dead, { what: 'the process to stop or die' })]);
  await disk.kill();
}

describe('delivery history under any sequence of writes, rotations, failures and crashes', () => {
  test('the reader never throws and returns recorded records in order, none twice; the files keep their bound', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(life, { minLength: 1, maxLength: 5 }), fc.integer({ min: 600, max: 4000 }), async (lives, maxBytes) => {
        const dir = stateDir(dirs);
        let next = 0;
        for (const plan of lives) {
          await live(dir, plan, maxBytes, next);
          next += plan.records;
          const found = (await readHistory(dir)).map((record) => numberOf(record.id));
          for (let i = 1; i < found.length; i++) assert.ok(found[i - 1]! < found[i]!, `out of order or twice: ${found.join(',')}`);
          for (const n of found) assert.ok(n >= 0 && n < next, `a record never made: ${n}`);
          for (const name of ['history.jsonl', 'history.1.jsonl']) {
            assert.ok(sizeOf(join(dir, name)) <= maxBytes, `${name} holds ${sizeOf(join(dir, name))} bytes, over ${maxBytes}`);
          }
        }
        const last = lives.at(-1)!;
        if (last.failAt === null && last.dieAt === null && last.records > 0) {
          const found = (await readHistory(dir)).map((record) => numberOf(record.id));
          assert.equal(found.at(-1), next - 1, 'a porter that met no fault wrote its last record');
        }
        removeAll(dirs);
      }),
      fcOptions({ numRuns: 60 }),
    );
  });
});
