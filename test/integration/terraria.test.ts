import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { startTShockServer, type FakeTShockServer } from '../../src/sim/faults/tshock-server.js';
import { waitFor } from '../helpers/wait-for.js';
import { acceptedReports, isSettled, SIM_SERVER_ID, SIM_TOKEN, startBed, WAIT, type TestBed } from './harness.js';

/**
 * Terraria through the real CLI, against the simulated TShock REST API: deliveries exactly once,
 * TShock's failure answers reported as failed, an online-only purchase run once its player
 * appears (by character or account name), a wrong token ending porter with 78, the server going
 * away and coming back, and `porter check`, `porter players`, `porter rcon` for a tshock server.
 */

const REST_TOKEN = 'rest-token-1f9e7c55a0b2';

/** The bed's config pointed at a simulated TShock instead of its RCON server. */
function writeTShockConfig(bed: TestBed, tshock: FakeTShockServer, token = REST_TOKEN): string {
  return bed.writeConfig((config) => {
    const server = config.servers[0]!;
    server.executor = {
      type: 'tshock',
      host: tshock.host,
      port: tshock.port,
      password: token,
      timeoutMs: 30_000,
      connectTimeoutMs: 15_000,
    };
    server.players = { preset: 'terraria', refreshMs: 200 };
  });
}

/** Commands the simulated TShock ran, read-only ones left out. */
const ran = (tshock: FakeTShockServer) => tshock.executed.filter((e) => !e.query).map((e) => e.command);

describe('Terraria (TShock REST) through the real CLI', () => {
  test('claim → give → report, once each; TShock failures fail; online-only purchases wait for their player', async () => {
    const bed = await startBed();
    const tshock = await startTShockServer({ token: REST_TOKEN, players: [{ nickname: 'Ann, 1st of Her Name', username: 'ann' }] });
    try {
      writeTShockConfig(bed, tshock);
      const blade = bed.api.enqueue(SIM_SERVER_ID, { command: '/give "Terra Blade" "Ann" 1', player: 'ann', offlineExecute: false });
      const potions = bed.api.enqueue(SIM_SERVER_ID, {
        command: 'give 188 "tsn:Ann, 1st of Her Name" 20',
        player: 'Ann, 1st of Her Name',
        offlineExecute: false,
      });
      const ghost = bed.api.enqueue(SIM_SERVER_ID, { command: '/give Zenith Ghost', offlineExecute: true });
      const item = bed.api.enqueue(SIM_SERVER_ID, { command: '/item Zenith', offlineExecute: true });
      const bob = bed.api.enqueue(SIM_SERVER_ID, {
        command: '/give Zenith "Bob the Builder"',
        player: 'Bob the Builder',
        offlineExecute: false,
      });
      const lucja = bed.api.enqueue(SIM_SERVER_ID, { command: '/give "Life Crystal" "Łucja ★" 5', player: 'lucja', offlineExecute: false });
      const porter = bed.spawnPorter();
      const status = (id: string) => bed.api.commands().find((c) => c.id === id)?.status ?? '';
      await waitFor(() => [blade, potions, ghost, item].every((id) => isSettled(status(id))) || porter.exit, {
        ...WAIT,
        what: 'the deliveries for Ann and the ones that fail',
      });
      assert.equal(porter.exit, undefined, porter.tail());
      assert.equal(status(bob), 'SCHEDULED', 'Bob is offline: his purchase must wait');
      assert.equal(status(lucja), 'SCHEDULED', 'lucja is offline: her purchase must wait');
      tshock.join('Bob the Builder');
      tshock.join({ nickname: 'Łucja ★', username: 'lucja' });
      await waitFor(() => (isSettled(status(bob)) && isSettled(status(lucja))) || porter.exit, {
        ...WAIT,
        what: 'the deliveries for the players who joined',
      });
      porter.kill('SIGTERM');
      assert.deepEqual(await porter.waitExit(), { code: 0, signal: null }, porter.tail());

      assert.deepEqual([blade, potions, bob, lucja].map(status), ['EXECUTED', 'EXECUTED', 'EXECUTED', 'EXECUTED']);
      assert.deepEqual([ghost, item].map(status), ['FAILED', 'FAILED']);
      const byId = new Map(bed.api.commands().map((c) => [c.id, c]));
      assert.match(byId.get(ghost)?.error ?? '', /Invalid player!/);
      assert.match(byId.get(item)?.error ?? '', /You must use this command in-game\./);
      for (const command of bed.api.commands()) assert.equal(acceptedReports(command), 1, String(command.command));
      const sent = ran(tshock);
      for (const command of [
        '/give "Terra Blade" "Ann" 1',
        '/give 188 "tsn:Ann, 1st of Her Name" 20',
        '/give Zenith Ghost',
        '/item Zenith',
        '/give Zenith "Bob the Builder"',
        '/give "Life Crystal" "Łucja ★" 5',
      ]) {
        assert.equal(sent.filter((c) => c === command).length, 1, `${command} ran ${sent.filter((c) => c === command).length} times`);
      }
      assert.equal(sent.length, 6);
      assert.ok(!porter.output.includes(REST_TOKEN) && !porter.output.includes(encodeURIComponent(REST_TOKEN)));
    } finally {
      await tshock.close();
      await bed.close();
    }
  });

  test('a wrong REST token ends porter with 78 and says so, without the token', async () => {
    const bed = await startBed();
    const tshock = await startTShockServer({ token: REST_TOKEN });
    try {
      writeTShockConfig(bed, tshock, 'not-the-rest-token-77');
      const porter = bed.spawnPorter();
      assert.deepEqual(await porter.waitExit(), { code: 78, signal: null }, porter.tail());
      assert.match(porter.output, /rejected the token/);
      assert.match(porter.output, /ApplicationRestTokens/);
      assert.ok(!porter.output.includes('not-the-rest-token-77') && !porter.output.includes(REST_TOKEN), porter.tail());
      assert.deepEqual(ran(tshock), []);
    } finally {
      await tshock.close();
      await bed.close();
    }
  });

  test('TShock goes away and comes back: nothing is claimed meanwhile, then everything runs once', async () => {
    const bed = await startBed();
    const tshock = await startTShockServer({ token: REST_TOKEN, players: ['Bob'] });
    try {
      writeTShockConfig(bed, tshock);
      bed.api.enqueue(SIM_SERVER_ID, { command: '/give Zenith Bob' });
      const porter = bed.spawnPorter();
      await waitFor(() => bed.api.commands().every((c) => c.status === 'EXECUTED') || porter.exit, { ...WAIT, what: 'the first delivery' });
      assert.equal(porter.exit, undefined, porter.tail());

      await tshock.down();
      // Queued once porter knows TShock is gone: its second failed check, not the "lost" line. A
      // pull already on its way when TShock went down may reach the API after this test read that
      // line on a slow machine, and claim (and hold) whatever is due; porter sent it before it
      // logged two failed checks. A failed check is logged without an event
      // (src/net/reconnecting-link.ts), so its wording finds it.
      await waitFor(() => porter.events('connection.retrying').some((l) => Number(l.attempt) >= 2) || porter.exit, {
        ...WAIT,
        what: 'two failed token checks',
      });
      const during = ['/give "Terra Blade" Bob', '/say back soon', '/give 29 Bob 3'];
      const duringIds = during.map((command) => bed.api.enqueue(SIM_SERVER_ID, { command }));
      await waitFor(() => porter.events('connection.retrying').some((l) => Number(l.attempt) >= 4) || porter.exit, {
        ...WAIT,
        what: 'four failed token checks',
      });
      assert.equal(porter.exit, undefined, porter.tail());
      for (const id of duringIds) {
        assert.equal(bed.api.commands().find((c) => c.id === id)!.claims, 0, 'a command was claimed while TShock was down');
      }

      await tshock.up();
      await waitFor(() => bed.api.commands().every((c) => c.status === 'EXECUTED') || porter.exit, {
        ...WAIT,
        what: 'the waiting commands after TShock came back',
      });
      for (const command of ['/give Zenith Bob', ...during]) assert.equal(ran(tshock).filter((c) => c === command).length, 1, command);
      for (const command of bed.api.commands()) assert.equal(acceptedReports(command), 1);
      porter.kill('SIGTERM');
      assert.deepEqual(await porter.waitExit(), { code: 0, signal: null }, porter.tail());
      assert.ok(porter.events('connection.reconnected').length >= 1, porter.tail());
    } finally {
      await tshock.close();
      await bed.close();
    }
  });

  test('a command whose answer is lost is failed as unknown and never sent again', async () => {
    const bed = await startBed();
    const tshock = await startTShockServer({ token: REST_TOKEN, players: ['Bob'] });
    try {
      writeTShockConfig(bed, tshock);
      tshock.failNext('close-before-answer');
      const lost = bed.api.enqueue(SIM_SERVER_ID, { command: '/give Zenith Bob' });
      const next = bed.api.enqueue(SIM_SERVER_ID, { command: '/give 29 Bob 1' });
      const porter = bed.spawnPorter();
      const status = (id: string) => bed.api.commands().find((c) => c.id === id)?.status ?? '';
      await waitFor(() => (isSettled(status(lost)) && isSettled(status(next))) || porter.exit, { ...WAIT, what: 'both commands settled' });
      porter.kill('SIGTERM');
      assert.deepEqual(await porter.waitExit(), { code: 0, signal: null }, porter.tail());
      assert.equal(status(lost), 'FAILED');
      assert.match(bed.api.commands().find((c) => c.id === lost)?.error ?? '', /unknown/i);
      assert.equal(status(next), 'EXECUTED');
      assert.deepEqual(ran(tshock), ['/give Zenith Bob', '/give 29 Bob 1']);
    } finally {
      await tshock.close();
      await bed.close();
    }
  });

  test('porter check, porter players and porter rcon work for a tshock server', async () => {
    const bed = await startBed();
    const tshock = await startTShockServer({ token: REST_TOKEN, players: ['Bob the Builder', { nickname: 'Ann, 1st', username: 'ann' }] });
    try {
      const configPath = writeTShockConfig(bed, tshock);
      const check = bed.spawnPorter({ args: ['check', '-c', configPath] });
      assert.deepEqual(await check.waitExit(), { code: 0, signal: null }, check.tail());
      assert.match(check.stdout, /^✔ .*TShock REST token accepted by http:\/\/127\.0\.0\.1:\d+/m);
      assert.match(check.stdout, /2 players online \(3 identifiers\): bob the builder, ann, 1st, ann/);

      const players = bed.spawnPorter({ args: ['players', '-c', configPath] });
      assert.deepEqual(await players.waitExit(), { code: 0, signal: null }, players.tail());
      assert.equal(players.stdout, 'bob the builder\nann, 1st\nann\n');

      const rcon = bed.spawnPorter({ args: ['rcon', '-c', configPath, 'give', '"Terra Blade"', 'Bob', '1'] });
      assert.deepEqual(await rcon.waitExit(), { code: 0, signal: null }, rcon.tail());
      assert.equal(rcon.stdout, 'Gave Bob the Builder 1 Terra Blade.\n');
      assert.deepEqual(ran(tshock), ['/give "Terra Blade" Bob 1']);

      const list = bed.spawnPorter({ args: ['rcon', '-c', configPath, '/v2/players/list'] });
      assert.deepEqual(await list.waitExit(), { code: 0, signal: null }, list.tail());
      assert.equal((JSON.parse(list.stdout) as { players: unknown[] }).players.length, 2);

      writeTShockConfig(bed, tshock, 'wrong-rest-token-31');
      const bad = bed.spawnPorter({ args: ['check', '-c', configPath] });
      assert.equal((await bad.waitExit()).code, 78, bad.tail());
      assert.match(bad.stdout, /^✖ server itest: .*rejected the token/m);
      for (const output of [check.output, players.output, rcon.output, bad.output]) {
        for (const secret of [REST_TOKEN, 'wrong-rest-token-31', SIM_TOKEN]) assert.ok(!output.includes(secret), output);
      }
    } finally {
      await tshock.close();
      await bed.close();
    }
  });
});
