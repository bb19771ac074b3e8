import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startRconServer, type FakeRconServer } from '../../src/sim/rcon-server.js';
import { SIM_SERVER_ID, SIM_TOKEN, startSellerApi, type FakeSellerApi } from '../../src/sim/faults/seller-api.js';
import { waitFor } from '../helpers/wait-for.js';
import { CLI, isSettled, WAIT } from './harness.js';

/**
 * `porter init` without a terminal, as a script or CI runs it: every answer from flags and the
 * environment, a missing one named, nothing written unless the token and the game server login
 * were proven, and what it writes runs: `porter run` on it delivers.
 */

const FIXTURES = join(import.meta.dirname, '../../../test/fixtures/game-dirs');
const MINECRAFT_PASSWORD = 'mcFixtureRcon25575';

interface Result {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

function porter(args: readonly string[], env: Record<string, string> = {}, cwd?: string): Promise<Result> {
  const clean: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) if (!key.startsWith('PORTER_') && key !== 'NODE_TEST_CONTEXT') clean[key] = value;
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], { env: { ...clean, ...env }, cwd, timeout: 60_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

/** The health endpoint on a port the system picks, so parallel test files never collide on 9464. */
function onAnyFreePort(configPath: string): void {
  const config = JSON.parse(readFileSync(configPath, 'utf8')) as { health?: { listen: string } };
  assert.equal(config.health?.listen, '127.0.0.1:9464', 'init writes the health endpoint the container HEALTHCHECK asks');
  writeFileSync(configPath, JSON.stringify({ ...config, health: { listen: '127.0.0.1:0' } }), { mode: 0o600 });
}

describe('porter init from flags (no terminal)', () => {
  let api: FakeSellerApi;
  let game: FakeRconServer;
  let work: string;
  let tokenFile: string;
  before(async () => {
    api = await startSellerApi({
      servers: [{ id: SIM_SERVER_ID, name: 'survival', type: 'RCON', rcon: { host: '127.0.0.1', port: 25575 } }],
      tokens: { [SIM_TOKEN]: ['commands:execute', 'servers:read'], gci_execute_only_0000000000: ['commands:execute'] },
    });
    game = await startRconServer({ password: MINECRAFT_PASSWORD, flavour: 'minecraft', players: ['Steve'] });
    work = mkdtempSync(join(tmpdir(), 'porter-init-'));
    tokenFile = join(work, 'token.txt');
    writeFileSync(tokenFile, `${SIM_TOKEN}\n`);
  });
  after(async () => {
    await Promise.all([api.close(), game.close()]);
    rmSync(work, { recursive: true, force: true });
  });

  const flags = (dir: string, more: readonly string[] = []) => [
    'init',
    '--api-url',
    api.url,
    '--token-file',
    tokenFile,
    '--game-dir',
    join(FIXTURES, 'minecraft'),
    '--rcon-port',
    String(game.port),
    '--dir',
    dir,
    ...more,
  ];

  test('a Minecraft folder: proven, written 0600 with $schema, and `porter run` on it delivers the first purchase', async () => {
    const dir = join(work, 'first');
    const result = await porter(flags(dir, ['--server-id', SIM_SERVER_ID, '--yes']));
    assert.equal(result.code, 0, result.stdout + result.stderr);
    assert.match(result.stdout, /token accepted/);
    assert.match(result.stdout, /rcon\.port .*server\.properties/, 'where each value came from');
    assert.match(result.stdout, /1 player online: steve/);
    assert.match(result.stdout, /porter(\.js)? check -c .*config\.json/);
    for (const secret of [SIM_TOKEN, MINECRAFT_PASSWORD]) assert.ok(!result.stdout.includes(secret) && !result.stderr.includes(secret));

    for (const name of ['config.json', 'api-token', 'game-password']) {
      assert.equal(statSync(join(dir, name)).mode & 0o777, 0o600, name);
    }
    assert.equal(readFileSync(join(dir, 'game-password'), 'utf8').trim(), MINECRAFT_PASSWORD);
    const config = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')) as Record<string, unknown>;
    assert.match(String(config.$schema), /config\.schema\.json$/);
    assert.ok(existsSync(join(dir, String(config.$schema))), '$schema points at the installed schema');
    assert.ok(
      !JSON.stringify(config).includes(SIM_TOKEN) && !JSON.stringify(config).includes(MINECRAFT_PASSWORD),
      'no secret in the config',
    );

    const id = api.enqueue(SIM_SERVER_ID, { command: 'give Steve diamond 1', player: 'Steve', offlineExecute: false });
    // init writes health.listen 127.0.0.1:9464; tests beside this one may hold that port.
    onAnyFreePort(join(dir, 'config.json'));
    const run = execFile(process.execPath, [CLI, 'run', '-c', join(dir, 'config.json')], { timeout: 60_000 });
    try {
      await waitFor(() => isSettled(api.commands().find((c) => c.id === id)?.status ?? ''), { ...WAIT, what: 'the first delivery' });
    } finally {
      run.kill('SIGTERM');
    }
    assert.equal(api.commands().find((c) => c.id === id)?.status, 'EXECUTED');

    const again = await porter(flags(dir, ['--server-id', SIM_SERVER_ID, '--yes']));
    assert.equal(again.code, 78, 'files that exist are not replaced');
    assert.match(again.stderr, /already exist.*--force/);

    // --force replaces them, and a secret file someone made readable is private again.
    chmodSync(join(dir, 'api-token'), 0o644);
    const forced = await porter(flags(dir, ['--server-id', SIM_SERVER_ID, '--yes', '--force']));
    assert.equal(forced.code, 0, forced.stdout + forced.stderr);
    assert.equal(statSync(join(dir, 'api-token')).mode & 0o777, 0o600);
  });

  test('without --yes, the detected values are not taken: exit 78 naming the flag to pass', async () => {
    const result = await porter(
      flags(join(work, 'no-yes'), ['--server-id', SIM_SERVER_ID]).filter(
        (arg, i, all) => all[i - 1] !== '--rcon-port' && arg !== '--rcon-port',
      ),
    );
    assert.equal(result.code, 78, result.stdout + result.stderr);
    assert.match(result.stderr, /no terminal to ask "Which game does this server run\?" on: pass --game \(or set PORTER_GAME\)/);
    assert.ok(!existsSync(join(work, 'no-yes')), 'nothing written');
  });

  test('one store server and --yes: picked without --server-id; a token without servers:read needs --server-id', async () => {
    const picked = await porter(flags(join(work, 'picked'), ['--yes']));
    assert.equal(picked.code, 0, picked.stdout + picked.stderr);
    assert.match(picked.stdout, /store server survival/);

    const narrow = join(work, 'narrow-token');
    writeFileSync(narrow, 'gci_execute_only_0000000000');
    const result = await porter(flags(join(work, 'narrow'), ['--yes']).map((arg) => (arg === tokenFile ? narrow : arg)));
    assert.equal(result.code, 78, result.stdout + result.stderr);
    assert.match(result.stdout, /servers:read scope would have listed them/);
    assert.match(result.stderr, /pass --server-id \(or set PORTER_SERVER_ID\)/);
  });

  test('a refused token or game password: exit 78, the reason said, nothing written, no secret printed', async () => {
    const badToken = join(work, 'bad-token');
    writeFileSync(badToken, 'gci_wrong_token_1234567890');
    const token = await porter(flags(join(work, 'bad-token-dir'), ['--yes']).map((arg) => (arg === tokenFile ? badToken : arg)));
    assert.equal(token.code, 78, token.stdout + token.stderr);
    assert.match(token.stderr, /401/);
    assert.ok(!token.stderr.includes('gci_wrong_token_1234567890'));
    assert.ok(!existsSync(join(work, 'bad-token-dir')));

    const badPassword = join(work, 'bad-password');
    writeFileSync(badPassword, 'not-the-minecraft-password');
    const password = await porter(flags(join(work, 'bad-password-dir'), ['--yes', '--rcon-password-file', badPassword]));
    assert.equal(password.code, 78, password.stdout + password.stderr);
    assert.match(password.stderr, /password/i);
    assert.ok(!(password.stdout + password.stderr).includes('not-the-minecraft-password'));
    assert.ok(!existsSync(join(work, 'bad-password-dir')));
  });

  test('a store plan without API access (402): exit 78 saying so, nothing written', async () => {
    api.inject(
      'servers',
      {
        status: 402,
        contentType: 'application/problem+json',
        body: JSON.stringify({ type: 'about:blank', title: 'Payment Required', status: 402, code: 'PLAN_FEATURE_REQUIRED' }),
      },
      { times: 1 },
    );
    const dir = join(work, 'no-plan');
    const result = await porter(flags(dir, ['--yes']));
    assert.equal(result.code, 78, result.stdout + result.stderr);
    assert.match(result.stderr, /plan does not include API access \(402\)/);
    assert.ok(!existsSync(dir));
  });

  test('--systemd: config 0644 naming no secret, secrets 0600 where the unit loads its credentials from, the unit installed, the steps left printed', async () => {
    const dir = join(work, 'etc-porter');
    const unitDir = join(work, 'units');
    const result = await porter(flags(dir, ['--yes', '--systemd', '--unit-dir', unitDir]));
    assert.equal(result.code, 0, result.stdout + result.stderr);
    // No systemd running this test: init says so and prints every step that is left, exactly.
    assert.match(result.stdout, /not checked as the service yet: this host is not running systemd/);
    const unitPath = join(unitDir, 'porter.service');
    for (const step of [
      `sudo install -m 0644 ${unitPath} /etc/systemd/system/porter.service`,
      'sudo systemctl daemon-reload',
      'sudo porter check --unit porter',
      'sudo systemctl enable --now porter',
    ]) {
      assert.ok(result.stdout.includes(`\n  ${step}\n`), `prints: ${step}\n${result.stdout}`);
    }
    // systemd/porter.service: LoadCredential=porter-api-token:<dir>/api-token and porter-rcon-password:<dir>/rcon-password
    assert.equal(readFileSync(join(dir, 'api-token'), 'utf8').trim(), SIM_TOKEN);
    assert.equal(readFileSync(join(dir, 'rcon-password'), 'utf8').trim(), MINECRAFT_PASSWORD);
    // docs/install.md#where-the-files-go: the dynamic user reads the config; only root reads the secrets.
    const modes = { '.': 0o755, 'config.json': 0o644, 'api-token': 0o600, 'rcon-password': 0o600 };
    for (const [name, mode] of Object.entries(modes)) assert.equal(statSync(join(dir, name)).mode & 0o777, mode, name);
    assert.equal(statSync(unitPath).mode & 0o777, 0o644);
    const unit = readFileSync(unitPath, 'utf8');
    const shipped = readFileSync(join(import.meta.dirname, '../../../systemd/porter.service'), 'utf8');
    assert.equal(unit, shipped.replaceAll('/etc/porter/', `${dir}/`), 'the shipped unit, naming the files where init wrote them');
    assert.match(unit, new RegExp(`^ExecStart=/usr/local/bin/porter run --config ${dir}/config.json$`, 'm'));
    const config = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')) as {
      api: Record<string, unknown>;
      servers: Array<{ executor: Record<string, unknown> }>;
      stateDir: string;
    };
    assert.deepEqual(Object.keys(config.api), ['baseUrl']);
    assert.ok(!('password' in config.servers[0]!.executor) && !('passwordFile' in config.servers[0]!.executor));
    assert.equal(config.stateDir, '/var/lib/porter');

    // Again: the same unit is no conflict, but the config and secrets are.
    const again = await porter(flags(dir, ['--yes', '--systemd', '--unit-dir', unitDir]));
    assert.equal(again.code, 78, again.stdout + again.stderr);
    assert.doesNotMatch(again.stderr, /porter\.service/);
  });

  test('RCON switched off: --fix-game-settings switches it on with a new password, which porter then uses', async () => {
    const folder = join(work, 'mc-off');
    cpSync(join(FIXTURES, 'minecraft-rcon-off'), folder, { recursive: true });
    const before = readFileSync(join(folder, 'server.properties'), 'utf8');
    const dir = join(work, 'fixed');
    const result = await porter(
      flags(dir, ['--yes', '--fix-game-settings'])
        .map((arg) => (arg === join(FIXTURES, 'minecraft') ? folder : arg))
        // Nothing listens on port 1: the game server has not been restarted with its new settings yet.
        .map((arg) => (arg === String(game.port) ? '1' : arg)),
    );
    // The game server still runs with its old settings until restarted: the login cannot be proven yet.
    assert.equal(result.code, 0, result.stdout + result.stderr);
    assert.equal(result.stdout.match(/server\.properties was changed \(/g)?.length, 1, 'one fix, offered once');
    assert.match(result.stdout, /the file as it was is in \.\/server\.properties\.porter-backup/);
    assert.equal(readFileSync(join(folder, 'server.properties.porter-backup'), 'utf8'), before, 'backed up first');
    assert.match(result.stdout, /did not answer \(connection refused.*restart the game server now/);
    assert.match(result.stdout, /without a proven login: porter check proves it/);
    const after = readFileSync(join(folder, 'server.properties'), 'utf8');
    assert.match(after, /^enable-rcon=true$/m);
    const password = readFileSync(join(dir, 'game-password'), 'utf8').trim();
    assert.ok(password.length >= 16);
    assert.match(after, new RegExp(`^rcon\\.password=${password}$`, 'm'));
    assert.equal(after.split('\n').length, before.split('\n').length, 'only the two values changed');
    assert.ok(!result.stdout.includes(password));
  });
});
