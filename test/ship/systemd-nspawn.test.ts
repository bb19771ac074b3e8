import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test, type TestContext } from 'node:test';
import { startRconServer, type FakeRconServer } from '../../src/sim/rcon-server.js';
import { SIM_SERVER_ID, SIM_TOKEN, startSellerApi, type FakeSellerApi } from '../../src/sim/seller-api.js';
import { waitFor } from '../helpers/wait-for.js';
import { bootContainer, type Container } from './nspawn.js';
import { installPackedPorter } from './packed.js';
import { logLines } from './podman.js';
import { repoRoot } from './repo.js';
import { missingTool } from './run.js';

/**
 * An owner's first hour, by the book (docs/install.md#systemd-service), under a real systemd: a
 * container booted with systemd-nspawn from this host's /usr, the packed and installed porter
 * bound at /usr/local. `porter init --systemd` from flags alone, then the steps it prints; the
 * service runs as a dynamic user and delivers from the Seller API simulator to an RCON simulator
 * on 127.0.0.1; "Changing the configuration" (porter check --unit, systemctl reload) adds a
 * server without a restart; systemctl stop is clean; the journal holds no secret.
 * Needs root and systemd-nspawn (Debian: systemd-container); skipped, saying why, without them
 * (a missing tool fails under PORTER_REQUIRE_SHIP_TOOLS=1) or when the container does not boot.
 */

const PASSWORD = 'nspawn-rcon-password-7d1f';
const SECOND_SERVER_ID = '6f9619ff-8b86-d011-b42d-00c04fc964ff';
/** Generous: CI runs two test files at once on two loaded cores. */
const WAIT_MS = 60_000;

function skipReason(): string | false {
  if (process.getuid?.() !== 0) return 'systemd-nspawn needs root to boot a container';
  const missing = missingTool('systemd-nspawn', 'Debian: apt-get install systemd-container') || missingTool('nsenter', 'util-linux');
  if (missing) return missing;
  const node = realpathSync(process.execPath);
  if (!node.startsWith('/usr/') || node.startsWith('/usr/local/')) {
    return `node is ${node}: the container sees only the host's /usr, with the installed porter at /usr/local`;
  }
  return false;
}

const skip = skipReason();

describe('porter init --systemd under a real systemd (systemd-nspawn)', { skip, timeout: 300_000 }, () => {
  let work = '';
  let api: FakeSellerApi;
  let survival: FakeRconServer;
  let creative: FakeRconServer;
  let container: Container | undefined;
  let notBooted: string | undefined;
  let bootMs = 0;
  let initOutput = '';
  const inside = (args: readonly string[], env?: Record<string, string>) => {
    assert.ok(container, 'the container runs');
    return container.exec(args, { env, timeoutMs: WAIT_MS });
  };
  const property = async (name: string) => (await inside(['systemctl', 'show', '-P', name, 'porter.service'])).stdout.trim();
  const ready = (t: TestContext) => {
    if (notBooted) t.skip(notBooted);
    return notBooted === undefined;
  };

  const initArgs = (...more: string[]) => [
    'porter',
    'init',
    '--systemd',
    '--api-url',
    api.url,
    '--server-id',
    SIM_SERVER_ID,
    '--game',
    'minecraft',
    '--rcon-host',
    survival.host,
    '--rcon-port',
    String(survival.port),
    '--yes',
    ...more,
  ];
  const secretsEnv = { PORTER_API_TOKEN: SIM_TOKEN, PORTER_RCON_PASSWORD: PASSWORD };

  before(async () => {
    api = await startSellerApi({
      servers: [
        { id: SIM_SERVER_ID, name: 'survival', type: 'RCON' },
        { id: SECOND_SERVER_ID, name: 'creative', type: 'RCON' },
      ],
    });
    survival = await startRconServer({ password: PASSWORD, flavour: 'minecraft', players: ['Steve'] });
    creative = await startRconServer({ password: PASSWORD, flavour: 'minecraft', players: ['Alex'] });
    work = mkdtempSync(join(tmpdir(), 'porter-nspawn-'));
    // The package a user gets, installed with npm into a fresh prefix.
    const prefix = join(work, 'usr/local');
    await installPackedPorter(work, prefix);
    const booting = performance.now();
    try {
      container = await bootContainer({ bindReadOnly: { [prefix]: '/usr/local' }, timeoutMs: WAIT_MS });
      bootMs = performance.now() - booting;
    } catch (error) {
      notBooted = `the container did not boot here: ${(error as Error).message.slice(0, 2000)}`;
    }
  });

  after(async () => {
    await container?.kill();
    await Promise.all([api?.close(), survival?.close(), creative?.close()]);
    if (work) rmSync(work, { recursive: true, force: true });
  });

  test('porter init --systemd from flags: the files of docs/install.md, the unit installed, checked as the dynamic user, then done', async (t) => {
    if (!ready(t)) return;
    t.diagnostic(`systemd-nspawn: booted in ${bootMs.toFixed(0)} ms`);
    const started = performance.now();
    const init = await inside(initArgs(), secretsEnv);
    t.diagnostic(`porter init --systemd, check as the service included: ${(performance.now() - started).toFixed(0)} ms`);
    initOutput = init.stdout + init.stderr;
    assert.equal(init.code, 0, initOutput);
    // The check ran through systemd-run as the service will: its dynamic user read the config and
    // wrote its state directory, and the credentials carried the token and the password.
    assert.match(init.stdout, /^✔ config: \/etc\/porter\/config\.json \(1 server\)$/m);
    assert.match(init.stdout, /^✔ state directory writable: \/var\/lib\/porter$/m);
    assert.match(init.stdout, /^✔ server survival: players read .*: 1 player online: steve$/m);
    assert.match(init.stdout, /^✔ API token accepted by /m);
    assert.match(init.stdout, /done: the service can read its config and credentials/);
    assert.ok(init.stdout.indexOf('✔ API token') < init.stdout.indexOf('done:'), 'checked before done');

    const root = container!.root;
    const modes = { '/etc/porter': 0o755, '/etc/porter/config.json': 0o644, '/etc/porter/api-token': 0o600 };
    for (const [path, mode] of Object.entries({
      ...modes,
      '/etc/porter/rcon-password': 0o600,
      '/etc/systemd/system/porter.service': 0o644,
    })) {
      const stat = statSync(join(root, path));
      assert.equal(stat.mode & 0o777, mode, path);
      assert.equal(stat.uid, 0, path);
    }
    assert.equal(
      readFileSync(join(root, '/etc/systemd/system/porter.service'), 'utf8'),
      readFileSync(join(repoRoot, 'systemd/porter.service'), 'utf8'),
      'the shipped unit, as it is',
    );
    const config = readFileSync(join(root, '/etc/porter/config.json'), 'utf8');
    for (const secret of [SIM_TOKEN, PASSWORD]) {
      assert.ok(!config.includes(secret), 'no secret in the config');
      assert.ok(!initOutput.includes(secret), 'no secret in what init printed');
    }
  });

  /**
   * init writes health.listen 127.0.0.1:9464 (what the container HEALTHCHECK asks), and the
   * container shares the host's network: another porter or a second test run may hold that port.
   * The service gets one the system picks instead; the rest of init's config is left as it wrote it.
   */
  function useAnyHealthPort(): void {
    const configPath = join(container!.root, '/etc/porter/config.json');
    const config = JSON.parse(readFileSync(configPath, 'utf8')) as { health?: { listen: string } };
    writeFileSync(configPath, `${JSON.stringify({ ...config, health: { listen: '127.0.0.1:0' } }, null, 2)}\n`);
  }

  test('the steps init printed start it: the service runs as a dynamic user and delivers', async (t) => {
    if (!ready(t)) return;
    const next = initOutput.slice(initOutput.indexOf('Next:'));
    const steps = [...next.matchAll(/^ {2}sudo (systemctl .+)$/gm)].map((m) => m[1]!);
    assert.deepEqual(steps, ['systemctl enable --now porter'], next);
    useAnyHealthPort();
    for (const step of steps) {
      const result = await inside(step.split(' '));
      assert.equal(result.code, 0, `${step}: ${result.stdout}${result.stderr}`);
    }
    const id = api.enqueue(SIM_SERVER_ID, { command: 'give Steve diamond 1' });
    await waitFor(() => api.commands().find((c) => c.id === id && c.status === 'EXECUTED'), { timeoutMs: WAIT_MS, what: 'the delivery' });
    assert.ok(survival.executed.some((c) => c.command === 'give Steve diamond 1'));

    const pid = await property('MainPID');
    const status = await inside(['cat', `/proc/${pid}/status`]);
    const uid = Number(/^Uid:\s+(\d+)/m.exec(status.stdout)?.[1]);
    // systemd's dynamic users: 61184 to 65519 (systemd.exec(5), DynamicUser=).
    assert.ok(uid >= 61184 && uid <= 65519, `porter runs as uid ${uid}`);
    assert.equal(await property('User'), 'porter');
  });

  test('"Changing the configuration": porter check --unit passes where porter check -c cannot, and a reload adds a server without a restart', async (t) => {
    if (!ready(t)) return;
    const configPath = join(container!.root, '/etc/porter/config.json');
    const config = JSON.parse(readFileSync(configPath, 'utf8')) as { servers: unknown[] };
    config.servers.push({
      id: SECOND_SERVER_ID,
      name: 'creative',
      executor: { type: 'rcon', host: creative.host, port: creative.port },
      players: { preset: 'minecraft' },
    });
    writeFileSync(configPath, `${JSON.stringify(config, null, 2)}\n`);

    // Root outside the unit has no token: the secrets exist only as the unit's credentials.
    const plain = await inside(['porter', 'check', '-c', '/etc/porter/config.json']);
    assert.equal(plain.code, 78, plain.stdout + plain.stderr);
    assert.match(plain.stdout, /api\.token is missing/);

    const documented = initOutput.match(/^After editing the config later: sudo (.+) && sudo (.+)$/m);
    assert.ok(documented, initOutput);
    assert.deepEqual(documented.slice(1), ['porter check --unit porter', 'systemctl reload porter']);
    const pid = await property('MainPID');
    const check = await inside(documented[1]!.split(' '));
    assert.equal(check.code, 0, check.stdout + check.stderr);
    assert.match(check.stdout, /^✔ config: \/etc\/porter\/config\.json \(2 servers\)$/m);
    assert.match(check.stdout, /^✔ server creative: players read .*: 1 player online: alex$/m);
    assert.equal(await property('MainPID'), pid, 'the check left the running service alone');

    const reload = await inside(documented[2]!.split(' '));
    assert.equal(reload.code, 0, reload.stdout + reload.stderr);
    const id = api.enqueue(SECOND_SERVER_ID, { command: 'give Alex emerald 1' });
    await waitFor(() => api.commands().find((c) => c.id === id && c.status === 'EXECUTED'), {
      timeoutMs: WAIT_MS,
      what: 'the delivery to the added server',
    });
    assert.ok(creative.executed.some((c) => c.command === 'give Alex emerald 1'));
    assert.equal(await property('MainPID'), pid, 'no restart');
    assert.equal(await property('NRestarts'), '0');
  });

  test('init again on the running service asks for a restart; systemctl stop is clean, and the journal holds no secret', async (t) => {
    if (!ready(t)) return;
    // porter init again on the running service: its check shares the service's user, leaves it
    // running, and the step left is a restart (the credentials are copies taken at start).
    const pid = await property('MainPID');
    const again = await inside(initArgs('--force'), secretsEnv);
    assert.equal(again.code, 0, again.stdout + again.stderr);
    assert.match(again.stdout, /done: /);
    assert.match(again.stdout, /^ {2}sudo systemctl restart porter$/m);
    assert.doesNotMatch(again.stdout, /enable --now/);
    assert.equal(await property('MainPID'), pid);
    useAnyHealthPort();
    const restart = await inside(['systemctl', 'restart', 'porter']);
    assert.equal(restart.code, 0, restart.stdout + restart.stderr);
    const id = api.enqueue(SIM_SERVER_ID, { command: 'give Steve gold_ingot 1' });
    await waitFor(() => api.commands().find((c) => c.id === id && c.status === 'EXECUTED'), {
      timeoutMs: WAIT_MS,
      what: 'the delivery after the restart',
    });

    const stop = await inside(['systemctl', 'stop', 'porter']);
    assert.equal(stop.code, 0, stop.stdout + stop.stderr);
    assert.equal(await property('ActiveState'), 'inactive');
    assert.equal(await property('Result'), 'success');
    assert.equal(await property('ExecMainStatus'), '0');

    const unitLog = await inside(['journalctl', '--no-pager', '-o', 'cat', '-u', 'porter']);
    // journald keeps porter's JSON lines (stdout is no terminal there): the delivery is found by its event.
    assert.ok(
      logLines(unitLog.stdout).some((line) => line.event === 'delivery.done'),
      unitLog.stdout,
    );
    // Everything the machine logged: the service, both checks run through systemd-run, systemd itself.
    const journal = await inside(['journalctl', '--no-pager', '-o', 'verbose']);
    assert.equal(journal.code, 0, journal.stderr);
    assert.ok(journal.stdout.length > 0);
    for (const secret of [SIM_TOKEN, PASSWORD]) assert.ok(!journal.stdout.includes(secret), 'no secret in the journal');
  });

  test('the check as the service catches what root alone would not, and init says done only when it passes', async (t) => {
    if (!ready(t)) return;
    const root = container!.root;
    // The first-hour bug: a config only root can read. Root's own porter check reads it fine.
    chmodSync(join(root, '/etc/porter/config.json'), 0o600);
    const unreadable = await inside(['porter', 'check', '--unit', 'porter']);
    assert.equal(unreadable.code, 78, unreadable.stdout + unreadable.stderr);
    assert.match(unreadable.stdout, /^✖ config: .*permission denied/im);
    chmodSync(join(root, '/etc/porter/config.json'), 0o644);

    // A drop-in that takes the credentials away: init's check as the service fails, and init says so instead of done.
    mkdirSync(join(root, '/etc/systemd/system/porter.service.d'));
    writeFileSync(join(root, '/etc/systemd/system/porter.service.d/no-credentials.conf'), '[Service]\nLoadCredential=\n');
    const init = await inside(initArgs('--force'), secretsEnv);
    const output = init.stdout + init.stderr;
    assert.equal(init.code, 78, output);
    assert.match(output, /api\.token is missing/);
    assert.match(
      init.stderr,
      /porter check as the service failed \(exit 78, above\): fix what it names, then sudo porter check --unit porter/,
    );
    assert.doesNotMatch(output, /done:|enable --now/);
    for (const secret of [SIM_TOKEN, PASSWORD]) assert.ok(!output.includes(secret), 'no secret in what init printed');
  });
});
