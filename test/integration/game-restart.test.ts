import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { waitFor } from '../helpers/wait-for.js';
import { acceptedReports, gate, isSettled, SIM_SERVER_ID, startBed, WAIT } from './harness.js';

/**
 * "Don't claim what cannot run" (docs/design.md#delivery-semantics): while the game server is down porter
 * pulls nothing, and after it comes back deliveries resume on a new connection.
 */

describe('the game server goes away and comes back, through the real CLI', () => {
  test('down: no pulls (beyond one already in flight), nothing claimed; up: the waiting commands are delivered', async (t) => {
    const bed = await startBed();
    try {
      bed.writeConfig();
      const first = ['say before-1', 'say before-2'];
      for (const command of first) bed.api.enqueue(SIM_SERVER_ID, { command });
      const porter = bed.spawnPorter();
      await waitFor(() => bed.api.commands().every((c) => c.status === 'EXECUTED') || porter.exit, {
        ...WAIT,
        what: 'the first deliveries',
      });
      assert.equal(porter.exit, undefined, porter.tail());

      const downAt = Date.now();
      await bed.rcon.down();
      // Queued once porter knows, and counted from then: a pull already on its way when the server
      // went down may still claim whatever is due, and then holds it until the server is back (not
      // sent ≠ unknown). "Knows" is porter's second failed reconnect, not the "lost" line: on a
      // slow machine that pull may reach the API after this test read that line, but porter sent
      // it before it logged two failed attempts. A failed reconnect is logged without an event
      // (src/net/reconnecting-link.ts), so its wording finds it.
      await waitFor(() => porter.events('connection.retrying').some((l) => Number(l.attempt) >= 2) || porter.exit, {
        ...WAIT,
        what: 'two failed reconnect attempts',
      });
      const failingAt = Date.now();
      const during = ['say during-1', 'say during-2', 'give Steve diamond 3'];
      const duringIds = during.map((command) => bed.api.enqueue(SIM_SERVER_ID, { command }));
      // The observation window: porter fails to reconnect twice more (about 1 s of backoff),
      // during which an idle porter would have pulled every 200 ms.
      await waitFor(() => porter.events('connection.retrying').some((l) => Number(l.attempt) >= 4) || porter.exit, {
        ...WAIT,
        what: 'four failed reconnect attempts',
      });
      assert.equal(porter.exit, undefined, porter.tail());
      const pullsWhileDown = bed.api.requests.filter((r) => r.route === 'pull' && r.at >= downAt);
      assert.ok(pullsWhileDown.length <= 1, `porter pulled ${pullsWhileDown.length} times while the game server was down`);
      assert.deepEqual(
        pullsWhileDown.filter((r) => r.at >= failingAt),
        [],
        'pulls while porter was failing to reconnect',
      );
      for (const id of duringIds)
        assert.equal(bed.api.commands().find((c) => c.id === id)!.claims, 0, 'a command was claimed while the game server was down');

      const upAt = Date.now();
      await bed.rcon.up();
      await waitFor(() => bed.api.commands().every((c) => c.status === 'EXECUTED'), {
        ...WAIT,
        what: 'the waiting commands after the game server came back',
      });
      for (const command of during) {
        assert.equal(bed.ranCount(command), 1);
        assert.ok(bed.rcon.executed.find((e) => e.command === command)!.at >= upAt);
      }
      for (const command of bed.api.commands()) assert.equal(acceptedReports(command), 1);
      assert.ok(bed.rcon.totalConnections >= 2);

      porter.kill('SIGTERM');
      assert.deepEqual(await porter.waitExit(), { code: 0, signal: null }, porter.tail());
      assert.ok(porter.events('connection.reconnected').length >= 1, porter.tail());
      t.diagnostic(`${pullsWhileDown.length} pull(s) after the game server went down; ${bed.rcon.totalConnections} RCON connections`);
    } finally {
      await bed.close();
    }
  });

  test('restarts in the middle of a queue: every command settles once, none runs twice', async (t) => {
    const bed = await startBed();
    try {
      bed.writeConfig();
      // Each command takes the game 60 ms. The game holds its answers to the 3rd, 8th and 13th
      // until it has restarted, so each restart lands while a command is in flight and commands
      // are left for the next connection, however slow the machine.
      const held = new Map([2, 7, 12].map((i) => [`say restart-${i}`, gate()]));
      bed.rcon.setHandler((command) =>
        command.startsWith('say restart-')
          ? { text: '', delayMs: 60, ...(held.has(command) ? { after: held.get(command)!.promise } : {}) }
          : undefined,
      );
      const texts = Array.from({ length: 20 }, (_, i) => `say restart-${i}`);
      for (const command of texts) bed.api.enqueue(SIM_SERVER_ID, { command });
      const porter = bed.spawnPorter();

      for (const [command, answer] of held) {
        await waitFor(() => bed.ran().includes(command) || porter.exit, { ...WAIT, what: `${command} to reach the game` });
        await bed.rcon.restart();
        answer.open();
      }
      await waitFor(() => bed.api.commands().every((c) => isSettled(c.status)) || porter.exit, {
        ...WAIT,
        what: 'every command to settle',
      });
      assert.equal(porter.exit, undefined, porter.tail());

      const unknown: string[] = [];
      for (const command of bed.api.commands()) {
        const text = String(command.command);
        const runs = bed.ranCount(text);
        assert.equal(acceptedReports(command), 1, `${text}: ${JSON.stringify(command.reports)}`);
        assert.ok(runs <= 1, `${text} ran ${runs} times`);
        if (command.status === 'EXECUTED') assert.equal(runs, 1, `${text} reported done but never ran`);
        else {
          // A restart cut the answer off: the command may have run, so it was failed, not resent.
          assert.match(command.error ?? '', /outcome unknown|not sent/, text);
          unknown.push(text);
        }
      }
      for (const command of held.keys()) {
        const settled = bed.api.commands().find((c) => c.command === command)!;
        assert.equal(settled.status, 'FAILED', `${command} was cut off by a restart: ${JSON.stringify(settled)}`);
      }
      assert.ok(bed.rcon.totalConnections >= 4);
      porter.kill('SIGTERM');
      assert.deepEqual(await porter.waitExit(), { code: 0, signal: null }, porter.tail());
      t.diagnostic(`${unknown.length} of 20 failed as outcome unknown by a restart; ${bed.rcon.totalConnections} RCON connections`);
    } finally {
      await bed.close();
    }
  });
});
