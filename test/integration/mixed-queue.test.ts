import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { EnqueueInput } from '../../src/sim/seller-api.js';
import { waitFor } from '../helpers/wait-for.js';
import { acceptedReports, CLI, isSettled, SIM_SERVER_ID, startBed, WAIT, type PorterProcess, type TestBed } from './harness.js';

/**
 * "A mixed queue delivered exactly once": offline commands, online-only
 * commands for a player who is online, for one who joins later, commands due in the future and
 * commands the game refuses — all through the real CLI against both simulators.
 */

describe('a mixed queue through the real CLI', () => {
  let bed: TestBed;
  let porter: PorterProcess;

  before(async () => {
    bed = await startBed({ rcon: { players: ['Steve'] } });
    bed.writeConfig();
  });

  after(async () => {
    await bed.close();
  });

  test('every runnable command runs exactly once, online-only ones only after their player joins', async (t) => {
    t.diagnostic(`CLI under test: ${CLI}`);
    const now = Date.now();
    type Input = EnqueueInput & { readonly command: string };
    const offline: Input[] = Array.from({ length: 10 }, (_, i) => ({ command: `say offline-${i}`, player: 'Alex', offlineExecute: true }));
    const steve: Input[] = Array.from({ length: 6 }, (_, i) => ({
      command: `give Steve emerald ${i + 1}`,
      player: 'Steve',
      offlineExecute: false,
    }));
    const alex: Input[] = Array.from({ length: 8 }, (_, i) => ({
      command: `give Alex diamond ${i + 1}`,
      player: 'Alex',
      offlineExecute: false,
    }));
    const future: Array<Input & { executeAt: number }> = Array.from({ length: 4 }, (_, i) => ({
      command: `say future-${i}`,
      offlineExecute: true,
      executeAt: now + 1500 + i * 500,
    }));
    // The game answers "No player was found": a failed delivery that still ran once.
    const refused: Input[] = Array.from({ length: 2 }, (_, i) => ({
      command: `give Notch diamond ${i + 1}`,
      player: 'Notch',
      offlineExecute: true,
    }));
    // Interleaved so that waiting commands sit between runnable ones in the fake's queue order.
    const all: Input[] = [
      ...alex.slice(0, 4),
      ...offline.slice(0, 5),
      ...future,
      ...steve,
      ...refused,
      ...alex.slice(4),
      ...offline.slice(5),
    ];
    assert.equal(all.length, 30);
    const ids = new Map(all.map((input) => [bed.api.enqueue(SIM_SERVER_ID, input), input] as const));

    porter = bed.spawnPorter();
    const alexIds = new Set([...ids].filter(([, input]) => alex.includes(input)).map(([id]) => id));
    const othersSettled = () =>
      bed.api
        .commands()
        .filter((c) => !alexIds.has(c.id))
        .every((c) => isSettled(c.status));
    await waitFor(() => othersSettled() || porter.exit, { ...WAIT, what: 'every command except the ones for Alex to settle' });
    assert.equal(porter.exit, undefined, `porter exited early\n${porter.tail()}`);

    // Alex is offline: none of his online-only commands may have been handed out.
    for (const command of bed.api.commands().filter((c) => alexIds.has(c.id))) {
      assert.equal(command.status, 'SCHEDULED', `command ${command.id} (${String(command.command)}) was claimed while Alex was offline`);
      assert.equal(command.claims, 0);
    }

    const joinedAt = Date.now();
    bed.rcon.join('Alex');
    await waitFor(() => bed.api.commands().every((c) => isSettled(c.status)), {
      ...WAIT,
      what: 'every command to settle after Alex joined',
    });

    const commands = bed.api.commands();
    const ran = bed.ran();
    for (const command of commands) {
      const input = ids.get(command.id)!;
      const text = String(input.command);
      assert.equal(command.claims, 1, `${text} was claimed ${command.claims} times`);
      assert.equal(acceptedReports(command), 1, `${text}: ${JSON.stringify(command.reports)}`);
      assert.equal(ran.filter((c) => c === text).length, 1, `${text} ran ${ran.filter((c) => c === text).length} times`);
      const expected = refused.includes(input) ? 'FAILED' : 'EXECUTED';
      assert.equal(command.status, expected, `${text}: ${command.status} (${command.error ?? ''})`);
    }
    for (const command of commands.filter((c) => c.status === 'FAILED')) assert.match(command.error ?? '', /No player was found/);
    // Nothing but the queued commands ran (no duplicates, nothing invented).
    assert.equal(ran.length, all.length, `ran: ${JSON.stringify(ran)}`);

    const at = (text: string) => bed.rcon.executed.find((e) => e.command === text)!.at;
    for (const input of alex) assert.ok(at(input.command) >= joinedAt, `${input.command} ran before Alex joined`);
    for (const input of future)
      assert.ok(at(input.command) >= input.executeAt, `${input.command} ran ${input.executeAt - at(input.command)} ms early`);

    porter.kill('SIGTERM');
    const exit = await porter.waitExit();
    assert.deepEqual(exit, { code: 0, signal: null }, porter.tail());
    assert.equal(porter.events('porter.stopped')[0]?.unreported, 0);

    // One log line per delivery, naming the command id and outcome (read once porter exited:
    // the line is written after the report, so it may trail the fake's record).
    const delivered = [...porter.events('delivery.done'), ...porter.events('delivery.failed')];
    assert.equal(delivered.length, all.length);
    assert.deepEqual(new Set(delivered.map((l) => l.id)), new Set(ids.keys()));
  });
});
