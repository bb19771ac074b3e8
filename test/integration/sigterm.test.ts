import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { waitFor } from '../helpers/wait-for.js';
import { acceptedReports, gate, SIM_SERVER_ID, startBed, WAIT, type PorterProcess } from './harness.js';

/**
 * "SIGTERM mid-command": porter stops pulling at once, finishes and reports
 * the command in hand, and exits 0.
 */

describe('SIGTERM through the real CLI', () => {
  test('mid-command: the command in hand finishes and is reported done, nothing is pulled after the signal, exit 0', async (t) => {
    const bed = await startBed();
    try {
      bed.writeConfig();
      // The game server holds its answer to this one until porter has taken the signal: it is in
      // flight when the signal comes however slow the machine is.
      const slow = 'say slow-delivery';
      const answer = gate();
      bed.rcon.setHandler((command) => (command === slow ? { text: '', after: answer.promise } : undefined));
      const slowId = bed.api.enqueue(SIM_SERVER_ID, { command: slow });
      const behind = ['say behind-1', 'say behind-2'].map((command) => bed.api.enqueue(SIM_SERVER_ID, { command }));
      const porter = bed.spawnPorter();

      await waitFor(() => bed.rcon.executed.some((e) => e.command === slow) || porter.exit, {
        ...WAIT,
        what: 'the slow command to reach the game server',
      });
      assert.equal(porter.exit, undefined, porter.tail());
      const signalledAt = Date.now();
      porter.kill('SIGTERM');
      await porter.waitForEvent('porter.stopping');
      answer.open();
      const exit = await porter.waitExit();
      assert.deepEqual(exit, { code: 0, signal: null }, porter.tail());

      const commands = bed.api.commands();
      const delivered = commands.find((c) => c.id === slowId)!;
      assert.equal(delivered.status, 'EXECUTED', JSON.stringify(delivered));
      assert.equal(acceptedReports(delivered), 1);
      assert.ok(delivered.reports[0]!.at >= signalledAt, 'the report went out after the signal, once the answer came');
      for (const id of behind) {
        const waiting = commands.find((c) => c.id === id)!;
        assert.equal(waiting.status, 'SCHEDULED', `${String(waiting.command)} was claimed after SIGTERM`);
      }
      const late = bed.api.requests.filter((r) => r.route === 'pull' && r.at >= signalledAt);
      assert.deepEqual(late, [], 'pulls after the signal');
      assert.equal(bed.ranCount(slow), 1);
      assert.deepEqual(bed.ran(), [slow]);
      assert.ok(porter.events('porter.stopping').length === 1);
      assert.equal(porter.events('porter.stopped')[0]?.unreported, 0);
      t.diagnostic(`exited ${Date.now() - signalledAt} ms after SIGTERM`);
    } finally {
      await bed.close();
    }
  });

  test('while idle: exit 0 promptly, nothing left in the journal', async () => {
    const bed = await startBed();
    try {
      // A drain far longer than the exit bound below: a stop that waited it out cannot pass, and a
      // loaded machine has seconds of slack to exit.
      bed.writeConfig((config) => {
        config.shutdown.drainMs = 120_000;
      });
      bed.api.enqueue(SIM_SERVER_ID, { command: 'say only-one' });
      const porter = bed.spawnPorter();
      await waitFor(() => bed.api.commands()[0]!.status === 'EXECUTED', { ...WAIT, what: 'the delivery' });
      // Idle now: wait until porter has pulled again and found nothing.
      const settledAt = Date.now();
      await waitFor(() => bed.api.requests.some((r) => r.route === 'pull' && r.at > settledAt && r.status === 204), {
        ...WAIT,
        what: 'an idle pull',
      });
      porter.kill('SIGTERM');
      const exit = await porter.waitExit(30_000);
      assert.deepEqual(exit, { code: 0, signal: null }, porter.tail());
      assert.equal(porter.events('porter.stopped')[0]?.unreported, 0);
    } finally {
      await bed.close();
    }
  });

  test('SIGINT behaves like SIGTERM', async () => {
    const bed = await startBed();
    try {
      bed.writeConfig();
      const slow = 'say interrupted';
      const answer = gate();
      bed.rcon.setHandler((command) => (command === slow ? { text: '', after: answer.promise } : undefined));
      bed.api.enqueue(SIM_SERVER_ID, { command: slow });
      const porter = bed.spawnPorter();
      await waitFor(() => bed.rcon.executed.some((e) => e.command === slow) || porter.exit, {
        ...WAIT,
        what: 'the slow command to reach the game server',
      });
      porter.kill('SIGINT');
      await porter.waitForEvent('porter.stopping');
      answer.open();
      assert.deepEqual(await porter.waitExit(), { code: 0, signal: null }, porter.tail());
      assert.equal(bed.api.commands()[0]!.status, 'EXECUTED');
    } finally {
      await bed.close();
    }
  });

  test('while the game server still answers its login (a world loading): exit 0 within the drain bound, a second SIGTERM too', async () => {
    for (const second of [false, true]) {
      const bed = await startBed();
      try {
        bed.writeConfig((config) => {
          config.shutdown.drainMs = 2_000;
          config.servers[0]!.executor.connectTimeoutMs = 600_000;
        });
        // Far beyond the exit bound below: a stop that waits for the login cannot pass.
        bed.rcon.setLoginDelay(600_000);
        bed.api.enqueue(SIM_SERVER_ID, { command: 'say never-claimed' });
        const porter = bed.spawnPorter();
        await waitFor(() => bed.rcon.connections > 0 || porter.exit, { ...WAIT, what: 'porter logging in' });
        const signalledAt = Date.now();
        porter.kill('SIGTERM');
        if (second) {
          await porter.waitForEvent('porter.stopping');
          porter.kill('SIGTERM');
        }
        assert.deepEqual(await porter.waitExit(30_000), { code: 0, signal: null }, porter.tail());
        assert.ok(Date.now() - signalledAt < 30_000);
        assert.equal(bed.api.requests.filter((r) => r.route === 'pull').length, 0);
        assert.equal(bed.api.commands()[0]!.status, 'SCHEDULED');
      } finally {
        bed.rcon.setLoginDelay(0);
        await bed.close();
      }
    }
  });

  test('a storm of SIGTERMs, until porter is gone: exit 0, never ended by one of them', async () => {
    const bed = await startBed();
    try {
      bed.writeConfig();
      const porter = bed.spawnPorter();
      await porter.waitForEvent('porter.started');
      // Every few ms, through the drain, the stop, the log's flush and the exit itself.
      await assertStormEndsInExit0(porter, 'SIGTERM', 2);
    } finally {
      await bed.close();
    }
  });

  test('SIGHUPs from the SIGTERM on, until porter is gone (a reload racing the stop): exit 0, never ended by one of them', async () => {
    const bed = await startBed();
    try {
      bed.writeConfig();
      const porter = bed.spawnPorter();
      await porter.waitForEvent('porter.started');
      porter.kill('SIGTERM');
      // Through the drain, the stop, the log's flush and the exit: none of it may be ended by Node's default for SIGHUP.
      await assertStormEndsInExit0(porter, 'SIGHUP', 1);
    } finally {
      await bed.close();
    }
  });
});

/** `signal` every `everyMs` until porter is gone, which must be its own exit 0 and not one of them. */
async function assertStormEndsInExit0(porter: PorterProcess, signal: NodeJS.Signals, everyMs: number): Promise<void> {
  const storm = setInterval(() => porter.kill(signal), everyMs);
  try {
    assert.deepEqual(await porter.waitExit(), { code: 0, signal: null }, porter.tail());
  } finally {
    clearInterval(storm);
  }
}
