import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { waitFor } from '../helpers/wait-for.js';
import { PorterProcess, WAIT } from './harness.js';

/**
 * `porter sim` the way an owner meets it: the sim in one process (`--json`, as a script reads it),
 * the real `porter run` in a second with a config built from what the sim printed, purchases from
 * a third (`porter sim buy`) and from the printed HTTP route, the delivery seen on the simulated
 * game server and in `porter history`, then the sim stopped with a signal. Each test has its own
 * XDG_RUNTIME_DIR, where `porter sim buy` finds the sim by default.
 */

interface SimInfo {
  storeUrl: string;
  token: string;
  serverId: string;
  executor: { type: string; host: string; port: number };
  password: string;
  preset: string;
  failurePatterns?: string[];
  online: string[];
  example: { command: string; player: string };
  purchasesUrl: string;
  stateFile: string;
}

const dirs: string[] = [];
const processes: PorterProcess[] = [];
after(async () => {
  for (const p of processes) p.kill('SIGKILL');
  await Promise.allSettled(processes.map((p) => p.exited));
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** A private runtime folder, and the environment of every process of one test. */
function setting(): { dir: string; env: NodeJS.ProcessEnv } {
  const dir = mkdtempSync(join(tmpdir(), 'porter-sim-'));
  dirs.push(dir);
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) if (!key.startsWith('PORTER_') && key !== 'NODE_TEST_CONTEXT') env[key] = value;
  env.XDG_RUNTIME_DIR = dir;
  return { dir, env };
}

function spawn(args: readonly string[], env: NodeJS.ProcessEnv): PorterProcess {
  const p = new PorterProcess(args, env);
  processes.push(p);
  return p;
}

async function startSim(env: NodeJS.ProcessEnv, ...args: string[]): Promise<{ sim: PorterProcess; info: SimInfo }> {
  const sim = spawn(['sim', '--json', ...args], env);
  const info = await waitFor(
    () => (sim.lines[0] as unknown as SimInfo | undefined) ?? (sim.exit && assert.fail(`sim exited\n${sim.tail()}`)),
    {
      ...WAIT,
      what: "the sim's config line",
    },
  );
  return { sim, info };
}

/** A config built from what the sim printed, secrets in 0600 files as porter init writes them. */
function writeConfig(dir: string, info: SimInfo): string {
  writeFileSync(join(dir, 'api-token'), info.token, { mode: 0o600 });
  writeFileSync(join(dir, 'game-password'), info.password, { mode: 0o600 });
  const configPath = join(dir, 'config.json');
  writeFileSync(
    configPath,
    JSON.stringify({
      api: { baseUrl: info.storeUrl, tokenFile: './api-token', timeoutMs: 30_000 },
      servers: [
        {
          id: info.serverId,
          name: 'rehearsal',
          executor: { ...info.executor, passwordFile: './game-password', timeoutMs: 30_000, connectTimeoutMs: 15_000 },
          players: { preset: info.preset, refreshMs: 200 },
          ...(info.failurePatterns && { failurePatterns: info.failurePatterns }),
        },
      ],
      poll: { idleMs: 200 },
      stateDir: './state',
      log: { level: 'info', pretty: false },
      shutdown: { drainMs: 10_000 },
    }),
    { mode: 0o600 },
  );
  return configPath;
}

/** Runs porter to its end: its exit code and output. */
async function porter(env: NodeJS.ProcessEnv, ...args: string[]): Promise<PorterProcess & { code: number | null }> {
  const p = spawn(args, env);
  const { code } = await p.waitExit();
  return Object.assign(p, { code });
}

describe('porter sim', () => {
  test('porter run delivers what porter sim buy and the HTTP route bought; history shows it; SIGINT ends the sim with 0', async () => {
    const { dir, env } = setting();
    const { sim, info } = await startSim(env);
    assert.match(info.token, /^gci_sim_[0-9a-f]{32}$/);
    assert.equal(info.stateFile, join(dir, 'porter', 'sim.json'));
    assert.equal(statSync(info.stateFile).mode & 0o077, 0, 'the state file holds the token: readable by its owner only');

    const configPath = writeConfig(dir, info);
    const run = spawn(['run', '-c', configPath], env);
    await run.waitForEvent('porter.started');

    const bought = await porter(env, 'sim', 'buy', 'give {player} diamond 1', '--player', 'Steve');
    assert.equal(bought.code, 0, bought.output);
    assert.match(bought.stdout, /^bought #\d+: give Steve diamond 1 for Steve/);

    // The route the sim printed, as curl would call it.
    const response = await fetch(info.purchasesUrl, {
      method: 'POST',
      headers: { authorization: `Bearer ${info.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ command: 'say {player} bought $& a gift', player: 'Steve' }),
    });
    assert.equal(response.status, 201);
    const viaRoute = (await response.json()) as { id: string; command: string };
    assert.equal(viaRoute.command, 'say Steve bought $& a gift', 'the name and the rest are put in as they are');

    for (const command of ['give Steve diamond 1', 'say Steve bought $& a gift']) {
      await waitFor(() => sim.events('ran').some((e) => e.command === command) || (sim.exit && assert.fail(sim.tail())), {
        ...WAIT,
        what: `the game server to run ${command}`,
      });
    }
    await waitFor(() => sim.events('status').filter((e) => e.status === 'EXECUTED').length === 2, {
      ...WAIT,
      what: 'the store to see both executed',
    });
    assert.ok(sim.events('bought').length === 2);

    const history = await porter(env, 'history', '-c', configPath);
    assert.equal(history.code, 0, history.output);
    assert.match(history.stdout, /give Steve diamond 1/);
    assert.match(history.stdout, new RegExp(viaRoute.id));

    run.kill('SIGTERM');
    assert.equal((await run.waitExit()).code, 0, run.tail());

    const stoppedAt = Date.now();
    sim.kill('SIGINT');
    const exit = await sim.waitExit();
    assert.deepEqual(exit, { code: 0, signal: null }, sim.tail());
    // Nothing of the sim waits on a stop: not even an idle keep-alive socket (the test's fetch holds one; waiting it out would take 5 s).
    assert.ok(Date.now() - stoppedAt < 3_000, `the sim took ${Date.now() - stoppedAt} ms to stop`);
    assert.equal(sim.events('stopped').length, 1);
    assert.equal(existsSync(info.stateFile), false, 'the state file is removed at stop');

    const late = await porter(env, 'sim', 'buy', 'give {player} diamond 1', '--player', 'Steve');
    assert.equal(late.code, 1);
    assert.match(late.stderr, /no sim is running .*start one with porter sim/);
  });

  test("a buyer's name is data: one with a line break is refused (64 from sim buy, 400 from the route), so no purchase carries a second command", async () => {
    const { env } = setting();
    const { sim, info } = await startSim(env);
    const injected = 'Steve\nop Steve';

    const refused = await porter(env, 'sim', 'buy', 'give {player} diamond 1', '--player', injected);
    assert.equal(refused.code, 64, refused.output);
    assert.match(refused.stderr, /player name has a line break/);

    const response = await fetch(info.purchasesUrl, {
      method: 'POST',
      headers: { authorization: `Bearer ${info.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ command: 'give {player} diamond 1', player: injected }),
    });
    assert.equal(response.status, 400);
    const unauthorized = await fetch(info.purchasesUrl, { method: 'POST', body: '{"command":"op Steve"}' });
    assert.equal(unauthorized.status, 401);

    const noPlayer = await porter(env, 'sim', 'buy', 'give {player} diamond 1');
    assert.equal(noPlayer.code, 64);
    assert.match(noPlayer.stderr, /--player/);

    // A purchase after the refused ones is the first and only one the store holds.
    const ok = await porter(env, 'sim', 'buy', '--json', '--offline', 'give {player} diamond 1', '--player', 'Alex');
    assert.equal(ok.code, 0, ok.output);
    const list = (await (await fetch(info.purchasesUrl, { headers: { authorization: `Bearer ${info.token}` } })).json()) as Array<{
      command: string;
    }>;
    assert.deepEqual(
      list.map((c) => c.command),
      ['give Alex diamond 1'],
    );

    sim.kill('SIGTERM');
    assert.deepEqual(await sim.waitExit(), { code: 0, signal: null }, sim.tail());
  });

  test('a second sim on the same state file is refused while the first runs; a bad --game is 64', async () => {
    const { env } = setting();
    const { sim } = await startSim(env, '--game', 'zomboid');
    const second = await porter(env, 'sim');
    assert.equal(second.code, 1, second.output);
    assert.match(second.stderr, /a sim already runs \(pid \d+/);

    const bad = await porter(env, 'sim', '--game', 'tetris');
    assert.equal(bad.code, 64, bad.output);

    sim.kill('SIGHUP');
    assert.deepEqual(await sim.waitExit(), { code: 0, signal: null }, sim.tail());
  });

  for (const game of ['zomboid', '7dtd', 'terraria', 'dayz']) {
    test(`--game ${game}: the config it prints delivers its example purchase`, async () => {
      const { dir, env } = setting();
      const { sim, info } = await startSim(env, '--game', game);
      const run = spawn(['run', '-c', writeConfig(dir, info)], env);
      await run.waitForEvent('porter.started');
      const bought = await porter(env, 'sim', 'buy', info.example.command, '--player', info.example.player);
      assert.equal(bought.code, 0, bought.output);
      const expected = info.example.command.split('{player}').join(info.example.player);
      await waitFor(
        () =>
          sim.events('status').some((e) => e.status === 'EXECUTED') ||
          ((sim.exit || run.exit || sim.events('status').some((e) => e.status === 'FAILED')) &&
            assert.fail(`${sim.tail()}\n${run.tail()}`)),
        { ...WAIT, what: 'the example purchase executed' },
      );
      assert.deepEqual(
        sim.events('ran').map((e) => e.command),
        [expected],
      );
      run.kill('SIGTERM');
      sim.kill('SIGTERM');
      assert.equal((await run.waitExit()).code, 0, run.tail());
      assert.deepEqual(await sim.waitExit(), { code: 0, signal: null }, sim.tail());
    });
  }
});
