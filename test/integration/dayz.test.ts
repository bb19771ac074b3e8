import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startBattlEyeServer, type BattlEyeServerOptions, type FakeBattlEyeServer } from '../../src/sim/faults/battleye-server.js';
import { waitFor } from '../helpers/wait-for.js';
import { acceptedReports, isSettled, RCON_PASSWORD, SIM_SERVER_ID, SIM_TOKEN, startBed, WAIT, type TestBed } from './harness.js';

/**
 * DayZ through the real CLI, against the simulated BattlEye RCon server over UDP: deliveries exactly
 * once, the server's failure answers reported as failed, an online-only purchase for a GUID or a
 * name with a comma run once its player appears in `players`, a wrong password ending porter with
 * 78, the server going down and forgetting porter (deliveries resume, nothing twice), a flood of
 * unacknowledged messages, and `porter check`, `porter players` and `porter rcon`.
 */

const SURVIVOR_STEAM_ID = '76561198066209976';
const SURVIVOR_GUID = 'a0d1158281d8639495a1908b5a802470';

interface DayzBed {
  readonly bed: TestBed;
  readonly dayz: FakeBattlEyeServer;
  /** Commands the DayZ server ran, queries left out. */
  readonly ran: (command: string) => number;
  readonly close: () => Promise<void>;
}

async function startDayz(options: Partial<BattlEyeServerOptions> = {}, password = RCON_PASSWORD): Promise<DayzBed> {
  const bed = await startBed();
  const dayz = await startBattlEyeServer({
    password: RCON_PASSWORD,
    players: [{ name: 'Survivor', steamId64: SURVIVOR_STEAM_ID }],
    ...options,
  });
  bed.writeConfig((config) => {
    const server = config.servers[0]!;
    server.executor = { type: 'battleye', host: dayz.host, port: dayz.port, password, timeoutMs: 2000, connectTimeoutMs: 2000 };
    server.players = { preset: 'dayz', refreshMs: 200 };
  });
  return {
    bed,
    dayz,
    ran: (command) => dayz.executed.filter((entry) => !entry.query && entry.command === command).length,
    close: async () => {
      await bed.close();
      await dayz.close();
    },
  };
}

describe('DayZ over BattlEye RCon through the real CLI', () => {
  test('claim → run → report once each; failures reported with the answer; online-only purchases wait for their player', async () => {
    const { bed, dayz, ran, close } = await startDayz();
    try {
      const status = (id: string) => bed.api.commands().find((c) => c.id === id)?.status;
      const thanks = bed.api.enqueue(SIM_SERVER_ID, { command: 'say -1 Thanks, Survivor!', player: 'Survivor', offlineExecute: false });
      const byGuid = bed.api.enqueue(SIM_SERVER_ID, { command: `#vip ${SURVIVOR_GUID} 30`, player: SURVIVOR_GUID, offlineExecute: false });
      const unknown = bed.api.enqueue(SIM_SERVER_ID, { command: 'givekit Survivor starter', offlineExecute: true });
      const denied = bed.api.enqueue(SIM_SERVER_ID, { command: '#shutdown', offlineExecute: true });
      const smith = bed.api.enqueue(SIM_SERVER_ID, {
        command: 'say -1 Welcome, Smith, John',
        player: 'Smith, John',
        offlineExecute: false,
      });
      const porter = bed.spawnPorter();
      await waitFor(() => [thanks, byGuid, unknown, denied].every((id) => isSettled(status(id) ?? '')) || porter.exit, {
        ...WAIT,
        what: 'the deliveries for the players online',
      });
      assert.equal(porter.exit, undefined, porter.tail());
      assert.equal(status(smith), 'SCHEDULED', 'Smith, John is offline: his purchase must wait');
      dayz.join({ name: 'Smith, John', lobby: true });
      await waitFor(() => isSettled(status(smith) ?? '') || porter.exit, { ...WAIT, what: "Smith, John's delivery once he is online" });
      porter.kill('SIGTERM');
      assert.deepEqual(await porter.waitExit(), { code: 0, signal: null }, porter.tail());

      assert.deepEqual([thanks, byGuid, smith].map(status), ['EXECUTED', 'EXECUTED', 'EXECUTED']);
      assert.deepEqual([unknown, denied].map(status), ['FAILED', 'FAILED']);
      const byId = new Map(bed.api.commands().map((c) => [c.id, c]));
      assert.match(byId.get(unknown)?.error ?? '', /Unknown command/);
      assert.match(byId.get(denied)?.error ?? '', /#shutdown/);
      assert.equal(ran('#shutdown'), 0);
      for (const command of bed.api.commands()) {
        assert.equal(acceptedReports(command), 1, String(command.command));
        if (command.id !== denied)
          assert.equal(ran(String(command.command)), 1, `${String(command.command)} ran ${ran(String(command.command))} times`);
      }
    } finally {
      await close();
    }
  });

  test('a wrong password ends porter with 78 and says so, without the password', async () => {
    const { bed, dayz, close } = await startDayz({}, 'not-the-dayz-password');
    try {
      const porter = bed.spawnPorter();
      assert.deepEqual(await porter.waitExit(), { code: 78, signal: null }, porter.tail());
      assert.equal(porter.events('connection.refused').length, 1, porter.tail());
      // What the operator reads: the password was rejected, and where the game server sets it.
      const fatal = porter.events('porter.fatal');
      assert.equal(fatal.length, 1, porter.tail());
      assert.match(JSON.stringify(fatal[0]), /rejected the password/);
      assert.match(JSON.stringify(fatal[0]), /RConPassword/);
      assert.ok(!porter.output.includes('not-the-dayz-password') && !porter.output.includes(RCON_PASSWORD));
      assert.equal(dayz.stats.authFailures, 1);
    } finally {
      await close();
    }
  });

  test('the server goes down, comes back, then forgets porter: deliveries resume, nothing runs twice, nothing is lost', async () => {
    const { bed, dayz, ran, close } = await startDayz();
    try {
      const batch = (name: string) => [1, 2, 3].map((n) => bed.api.enqueue(SIM_SERVER_ID, { command: `say -1 ${name} ${n}` }));
      const settled = (ids: string[]) => ids.every((id) => isSettled(bed.api.commands().find((c) => c.id === id)?.status ?? ''));
      const first = batch('before');
      const porter = bed.spawnPorter();
      await waitFor(() => settled(first) || porter.exit, { ...WAIT, what: 'the first deliveries' });

      await dayz.down();
      await porter.waitForEvent('connection.lost');
      const during = batch('during');
      await waitFor(() => porter.events('connection.retrying').length >= 2 || porter.exit, { ...WAIT, what: 'failed logins' });
      await dayz.up();
      await waitFor(() => settled(during) || porter.exit, { ...WAIT, what: 'the deliveries after the server came back' });

      dayz.dropClients();
      const after = batch('after');
      await waitFor(() => settled(after) || porter.exit, { ...WAIT, what: 'the deliveries after the server forgot porter' });
      assert.equal(porter.exit, undefined, porter.tail());

      for (const command of bed.api.commands()) {
        assert.equal(command.status, 'EXECUTED', `${String(command.command)}: ${command.error ?? ''}`);
        assert.equal(acceptedReports(command), 1);
        assert.equal(ran(String(command.command)), 1, String(command.command));
      }
      assert.ok(dayz.stats.logins >= 3, `logins: ${dayz.stats.logins}`);
    } finally {
      await close();
    }
  });

  test('one lost answer: that delivery fails as unknown and is never resent, the next runs on the same login', async () => {
    const { bed, dayz, ran, close } = await startDayz();
    try {
      const find = (id: string) => bed.api.commands().find((c) => c.id === id);
      const porter = bed.spawnPorter();
      await porter.waitForEvent('connection.up');
      dayz.failNext('drop-answer');
      const lost = bed.api.enqueue(SIM_SERVER_ID, { command: '#give Survivor M4' });
      await waitFor(() => isSettled(find(lost)?.status ?? '') || porter.exit, { ...WAIT, what: 'the delivery whose answer is lost' });
      await porter.waitForEvent('battleye.kept');
      const next = bed.api.enqueue(SIM_SERVER_ID, { command: 'say -1 next' });
      await waitFor(() => isSettled(find(next)?.status ?? '') || porter.exit, { ...WAIT, what: 'the next delivery' });
      assert.equal(porter.exit, undefined, porter.tail());

      assert.equal(find(lost)?.status, 'FAILED');
      assert.match(find(lost)?.error ?? '', /outcome unknown[\s\S]*not resent/);
      assert.equal(find(next)?.status, 'EXECUTED', find(next)?.error);
      assert.equal(ran('#give Survivor M4'), 1, 'never resent');
      assert.equal(dayz.stats.logins, 1, 'no new login for one lost answer');
      assert.deepEqual(porter.events('connection.lost'), []);
    } finally {
      await close();
    }
  });

  test('a flood of server messages: porter acknowledges them all and keeps delivering, once each', async () => {
    const { bed, dayz, ran, close } = await startDayz();
    try {
      const ids = Array.from({ length: 10 }, (_, n) => bed.api.enqueue(SIM_SERVER_ID, { command: `say -1 flood ${n}` }));
      const porter = bed.spawnPorter();
      await porter.waitForEvent('connection.up');
      let sent = 0;
      // 1,000 messages a second, far more than a busy server's chat: enough to interleave with every
      // delivery, yet within what one UDP receive buffer (~256 small datagrams on Linux) holds while
      // a loaded CI machine leaves porter without a CPU for a quarter of a second. At 5,000 a second
      // the kernel dropped datagrams there, the simulator's resends met a full buffer again, and it
      // dropped porter: a test of the machine's load, not of porter.
      const flood = setInterval(() => {
        for (let i = 0; i < 10; i += 1) dayz.broadcast(`(Global) Spammer: ${(sent += 1)}`);
      }, 10);
      try {
        await waitFor(() => ids.every((id) => isSettled(bed.api.commands().find((c) => c.id === id)?.status ?? '')) || porter.exit, {
          ...WAIT,
          what: 'the deliveries during the flood',
        });
        await waitFor(() => sent >= 2000, { ...WAIT, what: '2000 messages' });
      } finally {
        clearInterval(flood);
      }
      await waitFor(() => dayz.unacknowledged === 0, { ...WAIT, what: 'every message acknowledged' });
      assert.equal(porter.exit, undefined, porter.tail());
      assert.equal(dayz.stats.droppedClients, 0, 'porter was never dropped for a missing acknowledgement');
      for (const command of bed.api.commands()) {
        assert.equal(command.status, 'EXECUTED');
        assert.equal(ran(String(command.command)), 1);
      }
    } finally {
      await close();
    }
  });

  test('porter check, porter players and porter rcon speak BattlEye RCon', async () => {
    const { bed, dayz, close } = await startDayz();
    try {
      dayz.join({ name: 'Smith, John', lobby: true });
      const check = bed.spawnPorter({ args: ['check', '-c', bed.configPath] });
      assert.deepEqual(await check.waitExit(), { code: 0, signal: null }, check.tail());
      assert.match(check.stdout, /✔ server itest: BattlEye RCon login to 127\.0\.0\.1:\d+ \(UDP\) accepted/);
      assert.ok(
        check.stdout.includes(
          'players read (preset dayz, identifier: player name and BattlEye GUID (both are sent for every player)): 2 players online (4 identifiers)',
        ),
        check.stdout,
      );

      const players = bed.spawnPorter({ args: ['players', '-c', bed.configPath] });
      assert.deepEqual(await players.waitExit(), { code: 0, signal: null }, players.tail());
      const smithGuid = dayz.roster.find('Smith, John')!.guid;
      assert.equal(players.stdout, ['survivor', SURVIVOR_GUID, 'smith, john', smithGuid, ''].join('\n'));

      const rcon = bed.spawnPorter({ args: ['rcon', '-c', bed.configPath, 'players'] });
      assert.deepEqual(await rcon.waitExit(), { code: 0, signal: null }, rcon.tail());
      assert.equal(rcon.stdout, `${dayz.roster.table()}\n`);

      bed.writeConfig((config) => {
        const server = config.servers[0]!;
        server.executor = { type: 'battleye', host: dayz.host, port: dayz.port, password: 'wrong-dayz-pw', connectTimeoutMs: 15_000 };
        server.players = { preset: 'dayz' };
      });
      const refused = bed.spawnPorter({ args: ['check', '-c', bed.configPath] });
      assert.deepEqual(await refused.waitExit(), { code: 78, signal: null }, refused.tail());
      assert.match(refused.stdout, /✖ server itest: BattlEye RCon at .* rejected the password/);
      assert.ok(!refused.output.includes('wrong-dayz-pw') && !refused.output.includes(SIM_TOKEN));
    } finally {
      await close();
    }
  });
});
