import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { startRconServer, type FakeRconServer } from '../../src/sim/rcon-server.js';
import { SIM_SERVER_ID, SIM_TOKEN, startSellerApi, type FakeSellerApi } from '../../src/sim/seller-api.js';

/**
 * `porter check`, `porter rcon` and `porter players` as a user runs them: the bundled bin, a
 * config file, the simulated store and game server. Secrets are distinctive so any leak shows.
 */

const run = promisify(execFile);
const BIN = join(import.meta.dirname ?? new URL('.', import.meta.url).pathname, '../../bundle/porter.js');
const PASSWORD = 'rcon-pass-7f3a9c1e';
const WRONG_PASSWORD = 'wrong-pass-0d4b2e8a';
const WRONG_TOKEN = 'gci_wrong_6c1d93aa55';

let api: FakeSellerApi;
let game: FakeRconServer;
let dir: string;

before(async () => {
  api = await startSellerApi({});
  game = await startRconServer({ password: PASSWORD, players: ['Steve', 'Alex_2'] });
  dir = mkdtempSync(join(tmpdir(), 'porter-cli-'));
});
after(async () => {
  await Promise.all([api.close(), game.close()]);
  rmSync(dir, { recursive: true, force: true });
});

function config(
  name: string,
  overrides: { token?: string; password?: string; port?: number; serverId?: string; players?: Record<string, unknown> } = {},
): string {
  const path = join(dir, `${name}.json`);
  writeFileSync(
    path,
    JSON.stringify({
      api: { baseUrl: api.url, token: overrides.token ?? SIM_TOKEN },
      servers: [
        {
          id: overrides.serverId ?? SIM_SERVER_ID,
          name: 'survival',
          executor: {
            type: 'rcon',
            host: '127.0.0.1',
            port: overrides.port ?? game.port,
            password: overrides.password ?? PASSWORD,
            // Generous: a login on a loaded machine can take seconds; the unreachable case is refused at once.
            connectTimeoutMs: 15_000,
          },
          ...(overrides.players === undefined ? {} : { players: overrides.players }),
        },
      ],
      stateDir: join(dir, `state-${name}`),
    }),
  );
  return path;
}

async function porter(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [BIN, ...args], {
      timeout: 30_000,
      env: { ...process.env, PORTER_API_TOKEN: '', PORTER_RCON_PASSWORD: '' },
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

function assertNoSecrets(output: string): void {
  for (const secret of [PASSWORD, WRONG_PASSWORD, WRONG_TOKEN, SIM_TOKEN]) {
    assert.ok(!output.includes(secret), `a secret leaked into the output:\n${output}`);
  }
}

describe('porter check', () => {
  test('a good config: every line ✔, the players listed, exit 0, and nothing claimed', async () => {
    const claimedBefore = api.claimedCount;
    api.enqueue(SIM_SERVER_ID, { command: 'say must-not-be-claimed-by-check' });
    const result = await porter('check', '-c', config('good'));
    assert.equal(result.code, 0, result.stdout + result.stderr);
    const marks = result.stdout.split('\n').filter((line) => /^[✔✖]/.test(line));
    assert.ok(marks.length >= 4, result.stdout);
    assert.ok(
      marks.every((line) => line.startsWith('✔')),
      result.stdout,
    );
    assert.match(result.stdout, /RCON \(minecraft\) login to 127\.0\.0\.1:\d+ accepted/);
    assert.match(result.stdout, /2 players online: steve, alex_2/);
    assert.match(result.stdout, /API token accepted/);
    assert.match(result.stdout, /state directory writable/);
    assert.equal(api.claimedCount, claimedBefore, 'check must not claim a command');
    assertNoSecrets(result.stdout + result.stderr);
  });

  test('a rejected token: ✖ naming INVALID_INTEGRATION_TOKEN, exit 78, token never printed', async () => {
    const result = await porter('check', '-c', config('bad-token', { token: WRONG_TOKEN }));
    assert.equal(result.code, 78);
    assert.match(result.stdout, /^✖ API: .*INVALID_INTEGRATION_TOKEN/m);
    assertNoSecrets(result.stdout + result.stderr);
  });

  test('a wrong RCON password: ✖ saying the password was rejected, exit 78, password never printed', async () => {
    const result = await porter('check', '-c', config('bad-password', { password: WRONG_PASSWORD }));
    assert.equal(result.code, 78);
    assert.match(result.stdout, /^✖ server survival: .*password.*rejected/im);
    assertNoSecrets(result.stdout + result.stderr);
  });

  test('an unreachable game server: ✖ with the address, exit 1 (not a configuration error)', async () => {
    const result = await porter('check', '-c', config('unreachable', { port: 1 }));
    assert.equal(result.code, 1, result.stdout);
    assert.match(result.stdout, /^✖ server survival: .*127\.0\.0\.1:1/m);
  });

  test('a journal with commands still owed a report is counted; a damaged one is a ✖ naming the file', async () => {
    const owed = config('owed');
    const stateDir = join(dir, 'state-owed');
    mkdirSync(stateDir, { recursive: true });
    const entry = (id: string) => ({ serverId: SIM_SERVER_ID, id, command: `say ${id}`, claimedAt: 1 });
    writeFileSync(join(stateDir, 'journal.json'), JSON.stringify({ generation: 3, entries: { [`${SIM_SERVER_ID}/1`]: entry('1') } }));
    writeFileSync(join(stateDir, 'journal-3.log'), `${JSON.stringify({ op: 'claim', ...entry('2'), at: 2 })}\n`);
    const counted = await porter('check', '-c', owed);
    assert.equal(counted.code, 0, counted.stdout + counted.stderr);
    assert.match(counted.stdout, /the journal holds 2 commands still owed a report/);

    writeFileSync(join(stateDir, 'journal-3.log'), `garbage\n${JSON.stringify({ op: 'settle', serverId: SIM_SERVER_ID, id: '1' })}\n`);
    const damaged = await porter('check', '-c', owed);
    assert.equal(damaged.code, 1, damaged.stdout);
    assert.match(damaged.stdout, /^✖ journal: .*journal-3\.log is damaged at line 1/m);
  });

  test('an invalid config: ✖ naming the key path, exit 78', async () => {
    const path = join(dir, 'invalid.json');
    writeFileSync(
      path,
      JSON.stringify({
        api: { baseUrl: api.url, token: SIM_TOKEN },
        servers: [{ id: SIM_SERVER_ID, executor: { type: 'rcon', port: 'x', password: PASSWORD } }],
      }),
    );
    const result = await porter('check', '-c', path);
    assert.equal(result.code, 78);
    assert.match(result.stdout, /servers\[0\]\.executor\.port/);
    assertNoSecrets(result.stdout + result.stderr);
  });
});

describe('porter rcon and porter players', () => {
  test('rcon prints the game answer, whole, for a multi-packet answer', async () => {
    const result = await porter('rcon', '-c', config('rcon'), 'porter-sim', 'echo', '9000');
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stdout.trimEnd().length, 9000);
  });

  test('rcon with a wrong password: exit 78 and a message that names the fix, no password', async () => {
    const result = await porter('rcon', '-c', config('rcon-bad', { password: WRONG_PASSWORD }), 'list');
    assert.equal(result.code, 78);
    assert.match(result.stderr, /password/i);
    assertNoSecrets(result.stdout + result.stderr);
  });

  test('players prints exactly the identifiers porter sends, one per line, nothing else', async () => {
    const result = await porter('players', '-c', config('players'));
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stdout, 'steve\nalex_2\n');
  });

  test('with a join grace, players still prints everyone (one read is a first read) and says so on stderr; check names the grace', async () => {
    const graced = config('graced', { players: { preset: 'minecraft', joinGraceMs: 30_000 } });
    const players = await porter('players', '-c', graced);
    assert.equal(players.code, 0, players.stderr);
    assert.equal(players.stdout, 'steve\nalex_2\n');
    assert.match(
      players.stderr,
      /players\.joinGraceMs is 30000 ms: a running porter leaves a player out .* counts everyone listed as settled/,
    );
    const check = await porter('check', '-c', graced);
    assert.match(
      check.stdout,
      /2 players online: steve, alex_2; join grace 30000 ms \(a player is sent with pulls once listed that long\)/,
    );
  });
});
