import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { pino } from 'pino';
import { execPlayerReader, PlayerScriptError } from '../../src/players/exec-source.js';
import { FakeClock, flush } from '../helpers/fake-clock.js';
import { stepClockUntil } from '../helpers/step-clock.js';
import { waitFor } from '../helpers/wait-for.js';
import { fixture, isAlive, killQuietly, readPids } from './process-helpers.js';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';

const logger = pino({ level: 'silent' });

describe('execPlayerReader', () => {
  test('reads one identifier per line, trimmed, blank lines dropped', async () => {
    const read = execPlayerReader([fixture('players.sh')], { logger });
    assert.deepEqual(await read(), ['Alice', 'bob', '76561198000000001']);
  });

  test('fixed arguments are passed as-is, without a shell', async () => {
    const read = execPlayerReader([fixture('args.sh'), '$(touch pwned)', 'a b'], { logger });
    assert.deepEqual(await read(), ['2', '<$(touch pwned)>', '<a b>']);
  });

  test('a non-zero exit rejects with the status and stderr', async () => {
    const read = execPlayerReader([fixture('players-fail.sh')], { logger });
    await assert.rejects(read(), (error: unknown) => {
      assert.ok(error instanceof PlayerScriptError, String(error));
      assert.match(error.message, /exited with status 2/);
      assert.match(error.message, /cannot reach the game server/);
      return true;
    });
  });

  test('a missing executable rejects clearly', async () => {
    const read = execPlayerReader(['/nonexistent/list-players'], { logger });
    await assert.rejects(read(), /players script was not run: could not start "\/nonexistent\/list-players": ENOENT/);
  });

  test('too much output rejects instead of sending garbage', async () => {
    const read = execPlayerReader([fixture('flood.sh'), '0'], { logger, maxOutputBytes: 4096, timeoutMs: 60_000 });
    await assert.rejects(read(), /printed more than 4096 bytes/);
  });

  test('a script that hangs is killed at the deadline, with its children', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'porter-players-'));
    const pidfile = path.join(dir, 'pids');
    // The deadline on a fake clock, moved once the script has written its pid file: a slow machine
    // cannot time it out before it started. The kill grace is never reached: SIGTERM is enough.
    const clock = new FakeClock();
    const read = execPlayerReader([fixture('hang.sh'), pidfile], { logger, timeoutMs: 300, killGraceMs: 60_000, clock });
    let settled = false;
    const reading = read().finally(() => (settled = true));
    reading.catch(() => undefined);
    const pids = await readPids(pidfile);
    try {
      clock.advance(299);
      await flush();
      assert.equal(settled, false, 'killed before its deadline');
      clock.advance(1);
      // On over the 250 ms stdio grace only.
      await stepClockUntil(clock, () => settled, { maxStepMs: 250, what: 'the hung script to be killed' });
      await assert.rejects(reading, /did not finish within 300 ms and was killed/);
      assert.throws(() => process.kill(pids.leader, 0), { code: 'ESRCH' });
      await waitFor(() => !isAlive(pids.child), { what: "the script's child to be killed with its group" });
    } finally {
      killQuietly(pids.child);
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('an abort signal stops the read', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'porter-players-'));
    const pidfile = path.join(dir, 'pids');
    const controller = new AbortController();
    const reading = execPlayerReader([fixture('hang.sh'), pidfile], { logger, timeoutMs: 60_000 })(controller.signal);
    const pids = await readPids(pidfile);
    try {
      controller.abort();
      await assert.rejects(reading, /was stopped before it finished/);
      await waitFor(() => !isAlive(pids.child), { what: "the script's child to be killed with its group" });
    } finally {
      killQuietly(pids.child);
      await rm(dir, { recursive: true, force: true });
    }
  });
});
