import assert from 'node:assert/strict';
import { afterEach, describe, test } from 'node:test';
import { pino } from 'pino';
import type { PullResult, ReportResult, ServerApi } from '../../src/api/types.js';
import { systemClock } from '../../src/clock.js';
import { CommandFailedError, OutcomeUnknownError } from '../../src/errors.js';
import { Journal } from '../../src/delivery/journal/journal.js';
import { DeliveryHistory } from '../../src/delivery/history/history.js';
import { readHistory } from '../../src/delivery/history/history-file.js';
import { DeliveryLoop } from '../../src/delivery/loop.js';
import type { Executor } from '../../src/protocols/executor.js';
import { FaultyHistoryFs } from '../helpers/faulty-history-fs.js';
import { waitFor } from '../helpers/wait-for.js';
import { capturingLogger, removeAll, SERVER_ID, stateDir } from './history/history-helpers.js';

/**
 * The delivery loop and its history: every command whose outcome the loop decides gets exactly
 * one record, whatever the outcome; and a history whose disk hangs or refuses never holds a
 * delivery back.
 */

const dirs: string[] = [];
afterEach(() => removeAll(dirs));

class QueueApi implements ServerApi {
  readonly serverId = SERVER_ID;
  readonly queue: PullResult[] = [];
  readonly reports: Array<{ id: string; result: 'done' | 'fail' }> = [];
  async pull(): Promise<PullResult> {
    return this.queue.shift() ?? { kind: 'empty', status: 204 };
  }
  async done(id: string): Promise<ReportResult> {
    this.reports.push({ id, result: 'done' });
    return 'accepted';
  }
  async fail(id: string): Promise<ReportResult> {
    this.reports.push({ id, result: 'fail' });
    return 'accepted';
  }
}

/** A game server that answers each command by its first word. */
class WordExecutor implements Executor {
  readonly connectedText = 'a scripted game server';
  readonly ran: string[] = [];
  async connect(): Promise<void> {}
  isReady(): boolean {
    return true;
  }
  async waitReady(): Promise<void> {}
  async execute(command: string): Promise<string> {
    this.ran.push(command);
    if (command.startsWith('lose ')) throw new OutcomeUnknownError('no answer within 5000 ms');
    if (command.startsWith('script ')) throw new CommandFailedError('the script exited with status 3');
    if (command.includes('Nobody')) return 'No player was found';
    return command.startsWith('give ') ? `Gave 1 [Diamond] to ${command.split(' ')[1]}` : '';
  }
  async query(): Promise<string> {
    return '';
  }
  stats() {
    return { connected: true, reconnects: 0 };
  }
  async close(): Promise<void> {}
}

function start(journal: Journal, history: DeliveryHistory) {
  const api = new QueueApi();
  const executor = new WordExecutor();
  const loop = new DeliveryLoop({
    serverId: SERVER_ID,
    api,
    executor,
    players: { get: async () => ['steve'] },
    journal,
    policy: { check: (command) => (command.startsWith('op ') ? { ok: false, reason: 'denied by rule "op"' } : { ok: true }) },
    failureIn: (answer) => (/No player was found/.test(answer) ? answer : null),
    idleDelay: () => 5,
    pullDelay: () => 0,
    notSentRetryMs: 100,
    clock: systemClock,
    logger: pino({ level: 'silent' }),
    history: { record: (delivery) => history.record({ ...delivery, serverName: 'survival' }) },
  });
  const stop = new AbortController();
  const hard = new AbortController();
  const running = loop.run({ stop: stop.signal, hard: hard.signal });
  return {
    api,
    executor,
    async stopped() {
      stop.abort();
      await running;
      journal.close();
      await history.close();
    },
  };
}

describe('delivery loop and its history', () => {
  test('every decided command gets exactly one record: executed, failed by pattern, refused, unknown, not run, failed by the executor, left by a crash', async () => {
    const dir = stateDir(dirs);
    // A previous run claimed command 7 and died before its outcome.
    const before = new Journal(dir);
    await before.claim(SERVER_ID, '7', 'give Steve emerald 1', Date.now() - 60_000);
    before.close();
    const journal = new Journal(dir);
    const history = new DeliveryHistory({
      stateDir: dir,
      maxBytes: 1024 * 1024,
      scrub: (t) => t,
      clock: systemClock,
      logger: pino({ level: 'silent' }),
    });
    const t = start(journal, history);
    const claims: Array<[string, unknown]> = [
      ['1', 'give Steve diamond 1'],
      ['2', 'give Nobody dirt 1'],
      ['3', 'op Steve'],
      ['4', 'lose Steve'],
      ['5', null],
      ['6', 'script Steve'],
      // The API hands out command 1 again: reported again, not run, not recorded again.
      ['1', 'give Steve diamond 1'],
    ];
    for (const [id, command] of claims) t.api.queue.push({ kind: 'claimed', id, command });
    await waitFor(() => t.api.reports.length === 8, { what: 'eight reports' });
    await t.stopped();

    assert.deepEqual(t.executor.ran, ['give Steve diamond 1', 'give Nobody dirt 1', 'lose Steve', 'script Steve']);
    const records = await readHistory(dir);
    assert.deepEqual(
      records.map((r) => [r.id, r.outcome, r.why ?? null]),
      [
        ['7', 'failed', 'unknown'],
        ['1', 'executed', null],
        ['2', 'failed', 'game-answer'],
        ['3', 'failed', 'refused'],
        ['4', 'failed', 'unknown'],
        ['5', 'failed', 'not-run'],
        ['6', 'failed', 'command-failed'],
      ],
    );
    const byId = new Map(records.map((r) => [r.id, r]));
    assert.equal(byId.get('1')?.answer, 'Gave 1 [Diamond] to Steve');
    assert.equal(byId.get('1')?.command, 'give Steve diamond 1');
    assert.equal(byId.get('1')?.server, 'survival');
    assert.equal(byId.get('2')?.reason, 'the game answered: No player was found');
    assert.equal(byId.get('3')?.reason, 'refused, not sent: denied by rule "op"');
    assert.match(byId.get('4')?.reason ?? '', /^outcome unknown: no answer within 5000 ms/);
    assert.equal(byId.get('5')?.command, undefined);
    assert.equal(byId.get('7')?.command, 'give Steve emerald 1');
    assert.equal(byId.get('7')?.ms, null);
    for (const record of records.filter((r) => r.id !== '7')) assert.equal(typeof record.ms, 'number');
  });

  for (const fault of ['hangs', 'refuses every write (ENOSPC)'] as const) {
    test(`a history whose disk ${fault} holds no delivery back`, async () => {
      const dir = stateDir(dirs);
      const disk = new FaultyHistoryFs();
      if (fault === 'hangs') disk.stall();
      else disk.refuseWith = 'ENOSPC';
      const { logger, lines } = capturingLogger();
      const history = new DeliveryHistory({
        stateDir: dir,
        maxBytes: 1024 * 1024,
        scrub: (t) => t,
        clock: systemClock,
        logger,
        files: disk.files(),
        maxQueuedBytes: 4096,
      });
      const t = start(new Journal(dir), history);
      // A failed check still stops the loop and frees the disk, or the test would hang instead of failing.
      try {
        for (let n = 1; n <= 60; n++) t.api.queue.push({ kind: 'claimed', id: String(n), command: `give Steve diamond ${n}` });
        await waitFor(() => t.api.reports.length === 60, { what: 'all sixty delivered and reported' });
        assert.ok(
          t.api.reports.every((r) => r.result === 'done'),
          'every delivery done',
        );
        assert.ok(
          lines.some((l) => l.event === 'history.dropping'),
          'the bounded queue dropped records',
        );
        if (fault !== 'hangs') {
          assert.deepEqual(
            lines.filter((l) => l.level === 50).map((l) => l.event),
            ['history.write.failed'],
            'one error line for the episode',
          );
        }
      } finally {
        disk.release();
        await t.stopped();
      }
    });
  }
});
