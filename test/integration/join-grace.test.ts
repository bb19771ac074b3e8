import { afterEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { waitFor } from '../helpers/wait-for.js';
import { CLI, isSettled, SIM_SERVER_ID, startBed, WAIT, type TestBed } from './harness.js';

/**
 * players.joinGraceMs through the real CLI: a player who joins while an online-only purchase is
 * queued gets it only once porter has listed them for the grace. The simulators' own records are
 * the evidence: when the game server first answered a player list naming Alex (porter cannot
 * have seen him sooner), and what every pull carried. Nothing here races a timer: the grace only
 * sets a lower bound ("not before"), and the waits are bounded far above what the grace needs.
 */

const GRACE_MS = 4_000;
/** Date.now (the RCON simulator) and the API simulator's clock may differ by a few ms. */
const CLOCKS_TOLERANCE_MS = 100;

describe('players.joinGraceMs through the real CLI', () => {
  let bed: TestBed | undefined;

  afterEach(async () => {
    await bed?.close();
    bed = undefined;
  });

  async function joinWhileQueued(idleMs: number) {
    bed = await startBed({ rcon: { players: ['Steve'] } });
    const b = bed;
    b.writeConfig((config) => {
      config.servers[0]!.players = { preset: 'minecraft', refreshMs: 200, joinGraceMs: GRACE_MS };
      config.poll.idleMs = idleMs;
    });
    const id = b.api.enqueue(SIM_SERVER_ID, { command: 'give Alex diamond 1', player: 'Alex', offlineExecute: false });
    const porter = b.spawnPorter();
    const pulls = () => b.api.requests.filter((r) => r.route === 'pull' && r.online !== undefined);
    await waitFor(() => pulls().length > 0 || porter.exit !== undefined, { ...WAIT, what: 'porter to pull' });
    assert.equal(porter.exit, undefined, porter.tail());
    assert.deepEqual(pulls()[0]!.online, ['steve']);

    const joinedAt = Date.now();
    b.rcon.join('Alex');
    const command = () => b.api.commands().find((c) => c.id === id)!;
    await waitFor(() => isSettled(command().status) || porter.exit !== undefined, { ...WAIT, what: "Alex's purchase to be delivered" });
    assert.equal(command().status, 'EXECUTED', `${command().status}\n${porter.tail()}`);

    // The first answer to a player list that could name Alex: porter saw him no sooner.
    const listedAt = b.rcon.executed.find((e) => e.query && e.command.startsWith('list') && e.at >= joinedAt)!.at;
    const graceEnd = listedAt + GRACE_MS - CLOCKS_TOLERANCE_MS;
    const withAlex = pulls().filter((p) => p.online!.includes('alex'));
    assert.ok(withAlex.length > 0);
    for (const pull of withAlex) assert.ok(pull.at >= graceEnd, `a pull named Alex ${graceEnd - pull.at} ms before his grace ended`);
    const gaveAt = b.rcon.executed.find((e) => e.command === 'give Alex diamond 1')!.at;
    assert.ok(gaveAt >= graceEnd, `Alex's purchase ran ${graceEnd - gaveAt} ms before his grace ended`);
    assert.equal(b.ranCount('give Alex diamond 1'), 1);
    porter.kill('SIGTERM');
    assert.deepEqual(await porter.waitExit(), { code: 0, signal: null }, porter.tail());
    return { pulls: pulls(), listedAt, withAlex };
  }

  test('pulls during the grace leave the new player out; the purchase runs after it', async (t) => {
    t.diagnostic(`CLI under test: ${CLI}`);
    const { pulls, listedAt, withAlex } = await joinWhileQueued(300);
    // Idle pulls went on while the grace ran, each without Alex: the API could not hand his command out.
    const during = pulls.filter((p) => p.at > listedAt && p.at < withAlex[0]!.at);
    assert.ok(during.length > 0, 'no pull between the join and the end of the grace');
    for (const pull of during) assert.deepEqual(pull.online, ['steve']);
  });

  test('a grace that ends while the loop idles for minutes wakes it: the buyer does not wait for the idle pull', async () => {
    // idleMs 600000: idle pulls come every 150 s at the fastest, five times WAIT. Only the wake-up
    // at the end of the grace can deliver within WAIT.
    const { withAlex, listedAt } = await joinWhileQueued(600_000);
    assert.ok(withAlex[0]!.at >= listedAt + GRACE_MS - CLOCKS_TOLERANCE_MS);
  });
});
