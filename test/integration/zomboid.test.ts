import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { waitFor } from '../helpers/wait-for.js';
import { acceptedReports, isSettled, RCON_PASSWORD, SIM_SERVER_ID, startBed, WAIT } from './harness.js';

/**
 * Project Zomboid through the real CLI, against the simulated Zomboid console (Source RCON, answers
 * never split, an empty probe answered by two identical empty packets): deliveries exactly once,
 * the console's failure answers reported as failed, an online-only purchase run once its player
 * appears in `players`, and a wrong password ending porter with 78.
 */

describe('Project Zomboid through the real CLI', () => {
  test('claim → additem → report, once each; "No such user" and a missing item fail; bob gets his once he is online', async () => {
    const bed = await startBed({ rcon: { flavour: 'source', game: 'zomboid', players: ['alice'] } });
    try {
      bed.writeConfig((config) => {
        const server = config.servers[0]!;
        server.executor = { ...server.executor, flavour: undefined };
        server.players = { preset: 'zomboid', refreshMs: 200 };
      });
      const axe = bed.api.enqueue(SIM_SERVER_ID, { command: 'additem "alice" "Base.Axe"', player: 'alice', offlineExecute: false });
      const plank = bed.api.enqueue(SIM_SERVER_ID, { command: 'additem "alice" "Base.Plank" 5', player: 'alice', offlineExecute: false });
      const nope = bed.api.enqueue(SIM_SERVER_ID, { command: 'additem "alice" "Base.Nope!"', offlineExecute: true });
      const ghost = bed.api.enqueue(SIM_SERVER_ID, { command: 'additem "ghost" "Base.Axe"', offlineExecute: true });
      const bob = bed.api.enqueue(SIM_SERVER_ID, { command: 'additem "bob" "Base.Hammer"', player: 'bob', offlineExecute: false });
      const porter = bed.spawnPorter();
      const status = (id: string) => bed.api.commands().find((c) => c.id === id)?.status;
      await waitFor(() => [axe, plank, nope, ghost].every((id) => isSettled(status(id) ?? '')) || porter.exit, {
        ...WAIT,
        what: 'the deliveries for alice',
      });
      assert.equal(porter.exit, undefined, porter.tail());
      assert.equal(status(bob), 'SCHEDULED', 'bob is offline: his purchase must wait');
      bed.rcon.join('bob');
      await waitFor(() => isSettled(status(bob) ?? '') || porter.exit, { ...WAIT, what: "bob's delivery once he is online" });
      porter.kill('SIGTERM');
      assert.deepEqual(await porter.waitExit(), { code: 0, signal: null }, porter.tail());

      assert.deepEqual([axe, plank, bob].map(status), ['EXECUTED', 'EXECUTED', 'EXECUTED']);
      assert.deepEqual([nope, ghost].map(status), ['FAILED', 'FAILED']);
      const byId = new Map(bed.api.commands().map((c) => [c.id, c]));
      assert.match(byId.get(nope)?.error ?? '', /Item Base\.Nope! doesn't exist/);
      assert.match(byId.get(ghost)?.error ?? '', /No such user/);
      for (const command of bed.api.commands()) {
        assert.equal(acceptedReports(command), 1, String(command.command));
        assert.equal(
          bed.ranCount(String(command.command)),
          1,
          `${String(command.command)} ran ${bed.ranCount(String(command.command))} times`,
        );
      }
    } finally {
      await bed.close();
    }
  });

  test('a wrong RCON password ends porter with 78 and says so, without the password', async () => {
    const bed = await startBed({ rcon: { flavour: 'source', game: 'zomboid' } });
    try {
      bed.writeConfig((config) => {
        const server = config.servers[0]!;
        server.executor = { ...server.executor, flavour: undefined, password: 'not-the-pz-password' };
        server.players = { preset: 'zomboid' };
      });
      const porter = bed.spawnPorter();
      assert.deepEqual(await porter.waitExit(), { code: 78, signal: null }, porter.tail());
      assert.match(porter.output, /password/i);
      assert.ok(!porter.output.includes('not-the-pz-password') && !porter.output.includes(RCON_PASSWORD));
    } finally {
      await bed.close();
    }
  });
});
