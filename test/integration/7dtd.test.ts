import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTelnetServer, type FakeTelnetServer } from '../../src/sim/faults/telnet-server.js';
import { waitFor } from '../helpers/wait-for.js';
import { acceptedReports, isSettled, RCON_PASSWORD, SIM_SERVER_ID, SIM_TOKEN, startBed, WAIT, type TestBed } from './harness.js';

/**
 * 7 Days to Die through the real CLI, against the simulated telnet console (log lines between
 * every answer line, no end marker of its own): deliveries exactly once, the console's failure
 * answers reported as failed with its text, online-only purchases run once their player is in
 * `listplayers` (by name with spaces and commas, or by SteamID64), a wrong password ending porter
 * with 78, the console going away and coming back, and `porter check`, `players` and `rcon`.
 */

const ALICE_STEAM = '76561198000000171';

async function startConsole(password = RCON_PASSWORD): Promise<FakeTelnetServer> {
  return startTelnetServer({ password, players: [{ name: 'Alice Smith', platformId: `Steam_${ALICE_STEAM}` }] });
}

function telnetConfig(bed: TestBed, game: FakeTelnetServer, password = RCON_PASSWORD): void {
  bed.writeConfig((config) => {
    const server = config.servers[0]!;
    server.executor = { type: 'telnet', host: game.host, port: game.port, password, timeoutMs: 30_000, connectTimeoutMs: 15_000 };
    server.players = { preset: '7dtd', refreshMs: 200 };
  });
}

/** How many times the console took exactly this command line. */
const ranCount = (game: FakeTelnetServer, command: string) => game.executed.filter((e) => e.command === command).length;

describe('7 Days to Die through the real CLI', () => {
  test('claim → run → report once each; failures fail with the console text; Bob gets his once he is online', async () => {
    const bed = await startBed();
    const game = await startConsole();
    game.setAnswerNoise(1);
    try {
      telnetConfig(bed, game);
      const enqueue = (command: string, player?: string) =>
        bed.api.enqueue(
          SIM_SERVER_ID,
          player === undefined ? { command, offlineExecute: true } : { command, player, offlineExecute: false },
        );
      const coins = enqueue('give "Alice Smith" casinoCoin 100', 'Alice Smith');
      const xp = enqueue(`givexp Steam_${ALICE_STEAM} 500`, ALICE_STEAM);
      const noItem = enqueue('give "Alice Smith" nopeItem 1');
      const typo = enqueue('gve "Alice Smith" casinoCoin 1');
      const bob = enqueue('give "Bob, the Builder" gunPistol 1', 'Bob, the Builder');
      const status = (id: string) => bed.api.commands().find((c) => c.id === id)?.status ?? '';
      const porter = bed.spawnPorter();
      await waitFor(() => [coins, xp, noItem, typo].every((id) => isSettled(status(id))) || porter.exit, {
        ...WAIT,
        what: "Alice's deliveries",
      });
      assert.equal(porter.exit, undefined, porter.tail());
      assert.equal(status(bob), 'SCHEDULED', 'Bob is offline: his purchase must wait');
      game.setHideCommandExecutionLog(1);
      game.join({ name: 'Bob, the Builder' });
      await waitFor(() => isSettled(status(bob)) || porter.exit, { ...WAIT, what: "Bob's delivery once he is online" });
      porter.kill('SIGTERM');
      assert.deepEqual(await porter.waitExit(), { code: 0, signal: null }, porter.tail());

      assert.deepEqual([coins, xp, bob].map(status), ['EXECUTED', 'EXECUTED', 'EXECUTED']);
      assert.deepEqual([noItem, typo].map(status), ['FAILED', 'FAILED']);
      const byId = new Map(bed.api.commands().map((c) => [c.id, c]));
      assert.match(byId.get(noItem)?.error ?? '', /Item not found\./);
      assert.match(byId.get(typo)?.error ?? '', /\*\*\* ERROR: unknown command 'gve'/);
      assert.ok(!/INF|porter-end-/.test(byId.get(typo)?.error ?? ''), 'a log line or the end marker leaked into the reason');
      for (const command of bed.api.commands()) {
        assert.equal(acceptedReports(command), 1, String(command.command));
        assert.equal(
          ranCount(game, String(command.command)),
          1,
          `${String(command.command)} ran ${ranCount(game, String(command.command))} times`,
        );
      }
    } finally {
      await bed.close();
      await game.close();
    }
  });

  test('a wrong telnet password ends porter with 78 and says so, without the password', async () => {
    const bed = await startBed();
    const game = await startConsole();
    try {
      telnetConfig(bed, game, 'not-the-telnet-password');
      const porter = bed.spawnPorter();
      assert.deepEqual(await porter.waitExit(), { code: 78, signal: null }, porter.tail());
      assert.match(porter.output, /TelnetPassword/);
      assert.ok(!porter.output.includes('not-the-telnet-password') && !porter.output.includes(RCON_PASSWORD));
      assert.equal(game.authFailures, 1, 'porter tried the wrong password more than once');
    } finally {
      await bed.close();
      await game.close();
    }
  });

  test('the console goes away and comes back: deliveries resume on a new login, nothing runs twice', async () => {
    const bed = await startBed();
    const game = await startConsole();
    try {
      telnetConfig(bed, game);
      const before = bed.api.enqueue(SIM_SERVER_ID, { command: 'say "before"', offlineExecute: true });
      const porter = bed.spawnPorter();
      const status = (id: string) => bed.api.commands().find((c) => c.id === id)?.status ?? '';
      await waitFor(() => status(before) === 'EXECUTED' || porter.exit, { ...WAIT, what: 'the first delivery' });
      await game.down();
      await porter.waitForEvent('connection.lost');
      const during = ['say "during-1"', 'give "Alice Smith" resourceWood 5'].map((command) =>
        bed.api.enqueue(SIM_SERVER_ID, { command, offlineExecute: true }),
      );
      await game.up();
      await waitFor(() => during.every((id) => status(id) === 'EXECUTED') || porter.exit, {
        ...WAIT,
        what: 'deliveries after the restart',
      });
      assert.equal(porter.exit, undefined, porter.tail());
      assert.ok(porter.events('connection.reconnected').length >= 1, porter.tail());
      porter.kill('SIGTERM');
      assert.deepEqual(await porter.waitExit(), { code: 0, signal: null }, porter.tail());
      for (const command of bed.api.commands()) {
        assert.equal(acceptedReports(command), 1);
        assert.equal(ranCount(game, String(command.command)), 1, String(command.command));
      }
    } finally {
      await bed.close();
      await game.close();
    }
  });

  test('porter check, porter players and porter rcon speak to the console', async () => {
    const bed = await startBed();
    const game = await startConsole();
    try {
      game.join({ name: 'Bob, the Builder', platformId: 'XBL_2535405290123456', crossId: '<unknown>' });
      game.setAnswerNoise(2);
      telnetConfig(bed, game);
      const run = async (...args: string[]) => {
        const process = bed.spawnPorter({ args });
        const exit = await process.waitExit();
        return { ...exit, stdout: process.stdout, output: process.output };
      };
      const check = await run('check', '-c', bed.configPath);
      assert.equal(check.code, 0, check.output);
      assert.match(check.stdout, new RegExp(`✔ .*telnet login to 127\\.0\\.0\\.1:${game.port} accepted`));
      const players = await run('players', '-c', bed.configPath);
      assert.equal(players.code, 0, players.output);
      assert.equal(
        players.stdout,
        ['alice smith', ALICE_STEAM, 'eos_000000000000000000000000000000ab', 'bob, the builder', 'xbl_2535405290123456', ''].join('\n'),
      );
      const rcon = await run('rcon', '-c', bed.configPath, 'give', '"Alice Smith"', 'casinoCoin', '1');
      assert.equal(rcon.code, 0, rcon.output);
      assert.equal(rcon.stdout, 'Dropped item\n');
      for (const result of [check, players, rcon]) assert.ok(!result.output.includes(RCON_PASSWORD) && !result.output.includes(SIM_TOKEN));
    } finally {
      await bed.close();
      await game.close();
    }
  });
});
