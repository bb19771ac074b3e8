import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { Journal, JournalWriteError, type Outcome } from '../../../src/delivery/journal/journal.js';
import { FaultyFs, ProcessDied } from '../../helpers/faulty-fs.js';
import { fcOptions } from '../../helpers/fc-options.js';

/**
 * The journal against any sequence of claim / outcome / settle / flush, with the disk refusing any
 * write and the process dying at any write (a torn last write included). After the restart, what
 * the journal reports owed must be exactly what the caller was told is durable: every claim that
 * returned is still owed (with its outcome, if that returned too) unless its settle reached the
 * disk, and nothing appears that was never claimed.
 */

const SERVER = '1b4e28ba-2fa1-11d2-883f-0016d3cca427';

type Step =
  | { readonly op: 'claim' }
  | { readonly op: 'claims'; readonly count: number }
  | { readonly op: 'outcome'; readonly pick: number; readonly failed: boolean }
  | { readonly op: 'settle'; readonly pick: number }
  | { readonly op: 'flush' }
  | { readonly op: 'recover' };

const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 4, arbitrary: fc.constant({ op: 'claim' as const }) },
  // Several claims in one turn of the event loop: one group commit carries them all.
  { weight: 2, arbitrary: fc.record({ op: fc.constant('claims' as const), count: fc.integer({ min: 2, max: 5 }) }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constant('outcome' as const), pick: fc.nat(), failed: fc.boolean() }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constant('settle' as const), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.constant({ op: 'flush' as const }) },
  { weight: 1, arbitrary: fc.constant({ op: 'recover' as const }) },
);

const plan = fc.record({
  steps: fc.array(step, { minLength: 1, maxLength: 40 }),
  failAt: fc.uniqueArray(fc.tuple(fc.nat({ max: 120 }), fc.constantFrom('ENOSPC', 'EIO', 'EROFS')), {
    selector: ([at]) => at,
    maxLength: 6,
  }),
  dieAt: fc.option(fc.nat({ max: 150 }), { nil: undefined }),
  tornFraction: fc.double({ min: 0, max: 1, noNaN: true }),
});

/** What the caller was told: per id, whether its claim / outcome / settle is durable. */
interface Told {
  claimDurable: boolean;
  outcome?: Outcome;
  outcomeDurable: boolean;
  settled: boolean;
  settleDurable: boolean;
}

describe('journal under disk faults and crashes (property)', () => {
  test('after a restart, exactly what was durable is owed, and the journal always reads back', async () => {
    await fc.assert(
      fc.asyncProperty(plan, async ({ steps, failAt, dieAt, tornFraction }) => {
        const dir = mkdtempSync(join(tmpdir(), 'porter-journal-prop-'));
        try {
          const disk = new FaultyFs({ failAt: new Map(failAt), dieAt, tornFraction });
          const told = new Map<string, Told>();
          let nextId = 1;
          let journal: Journal | undefined;
          try {
            journal = new Journal(dir, { files: disk.files(), now: () => 1 });
          } catch {
            // The disk refused the state directory or the process died while opening: porter did not start.
          }
          /** Settles applied in memory since the last write that reached the disk. */
          let unwritten: string[] = [];
          const wrote = (ok: boolean) => {
            if (!ok) return;
            for (const id of unwritten) told.get(id)!.settleDurable = true;
            unwritten = [];
          };
          for (const s of steps) {
            if (!journal || disk.dead) break;
            const live = [...told.entries()].filter(([, t]) => !t.settled);
            try {
              switch (s.op) {
                case 'claim': {
                  const id = String(nextId++);
                  told.set(id, { claimDurable: false, outcomeDurable: false, settled: false, settleDurable: false });
                  await journal.claim(SERVER, id, `say ${id}`, 1);
                  told.get(id)!.claimDurable = true;
                  wrote(true);
                  break;
                }
                case 'claims': {
                  const ids = Array.from({ length: s.count }, () => String(nextId++));
                  for (const id of ids) told.set(id, { claimDurable: false, outcomeDurable: false, settled: false, settleDurable: false });
                  const results = await Promise.allSettled(ids.map((id) => journal.claim(SERVER, id, `say ${id}`, 1)));
                  // One write carried them all: every caller hears the same answer.
                  assert.equal(new Set(results.map((r) => r.status)).size, 1, 'one group commit, two answers');
                  const failure = results.find((r) => r.status === 'rejected');
                  if (failure) throw failure.reason;
                  for (const id of ids) told.get(id)!.claimDurable = true;
                  wrote(true);
                  break;
                }
                case 'outcome': {
                  if (live.length === 0) break;
                  const [id, t] = live[s.pick % live.length]!;
                  t.outcome = s.failed ? { result: 'failed', reason: `reason ${id}` } : { result: 'done' };
                  // A new outcome is durable only once its call returns: until then the disk may hold the one before.
                  t.outcomeDurable = false;
                  await journal.recordOutcome(SERVER, id, t.outcome, 2);
                  t.outcomeDurable = true;
                  wrote(true);
                  break;
                }
                case 'settle': {
                  const reported = live.filter(([, t]) => t.outcome);
                  if (reported.length === 0) break;
                  const [id, t] = reported[s.pick % reported.length]!;
                  journal.settle(SERVER, id, 3);
                  t.settled = true;
                  unwritten.push(id);
                  break;
                }
                case 'flush':
                  journal.flush();
                  wrote(true);
                  break;
                case 'recover':
                  wrote(journal.tryRecover());
              }
            } catch (error) {
              if (error instanceof JournalWriteError && error.cause instanceof ProcessDied) break;
              if (!(error instanceof JournalWriteError)) throw error;
              // A failed write: what it carried is not durable, and the caller goes on (the loop does).
              if (s.op === 'claim') {
                const id = String(nextId - 1);
                told.get(id)!.claimDurable = false;
              }
            }
          }
          journal?.close();

          // The restart: a healthy disk, the same directory.
          const reopened = new Journal(dir, { now: () => 4 });
          const owed = new Map(reopened.pending(SERVER).map((entry) => [entry.id, entry]));
          for (const [id, t] of told) {
            const entry = owed.get(id);
            if (t.settleDurable) {
              assert.equal(entry, undefined, `command ${id}: its settle reached the disk, yet it is owed again`);
              assert.deepEqual(reopened.recall(SERVER, id, 4)?.kind, 'settled', `command ${id}: settled but not remembered`);
              continue;
            }
            if (t.claimDurable && !t.settled)
              assert.ok(entry, `command ${id}: its claim was durable and it was never settled, yet it is lost`);
            if (entry && t.outcomeDurable) assert.deepEqual(entry.outcome, t.outcome, `command ${id}: its durable outcome was lost`);
          }
          for (const id of owed.keys()) assert.ok(told.has(id), `command ${id} owed but never claimed`);
          reopened.close();
        } finally {
          rmSync(dir, { recursive: true, force: true });
        }
      }),
      fcOptions({ numRuns: 300 }),
    );
  });
});
