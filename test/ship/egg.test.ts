import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { parseConfig } from '../../src/config/load.js';
import { GAMES } from '../../src/games/registry.js';
import { startRconServer, type FakeRconServer } from '../../src/fakes/faults/rcon-server.js';
import { SIM_SERVER_ID, SIM_TOKEN, startSellerApi, type FakeSellerApi } from '../../src/fakes/seller-api.js';
import { gate } from '../integration/harness.js';
import { waitFor } from '../helpers/wait-for.js';
import { ensureNodeBase } from './node-base.js';
import {
  applyConfigFiles,
  buildYolk,
  envFlags,
  pelicanStop,
  ruleProblems,
  WINGS_CAP_DROP,
  WINGS_UID,
  wingsEnvironment,
  type Egg,
} from './panel.js';
import { engineMissing, logsOf, podman, removeAll, RUN_FLAGS } from './podman.js';
import { readRepoFile } from './repo.js';
import { releaseTarball } from './packed.js';
import { run } from './run.js';

/**
 * deploy/pterodactyl/egg-porter.json, read as the panels' importers read it and run as Wings runs
 * an egg (panel.ts says what that is, from their sources): the installation script in an
 * installer container with the server folder at /mnt/server, installing the packed porter from a
 * release tarball URL; then, before each start, the configuration files rewritten from the
 * variables and the folder chowned to Wings' uid; then the server container with a terminal, a
 * read-only root and that uid, the startup command expanded by the yolk's entrypoint. Against the
 * simulators: it delivers, prints no secret, stops clean on the panel's signal within Pelican's
 * 10 s, and killed mid-command and started again it runs nothing twice.
 */

const skip = engineMissing();
const egg = JSON.parse(readRepoFile('deploy/pterodactyl/egg-porter.json')) as Egg;
const PASSWORD = 'panel-rcon-password-93c1';
const WAIT = { timeoutMs: 60_000, intervalMs: 100 } as const;
const SECRET_VARIABLES = ['PORTER_API_TOKEN', 'PORTER_RCON_PASSWORD'];
/** Reserved by Pterodactyl (app/Models/EggVariable.php) and by Pelican (the same, more names). */
const RESERVED = ['SERVER_MEMORY', 'SERVER_IP', 'SERVER_PORT', 'ENV', 'HOME', 'USER', 'STARTUP', 'SERVER_UUID', 'UUID'].concat([
  'P_SERVER_UUID',
  'P_SERVER_ALLOCATION_LIMIT',
  'MODIFIED_STARTUP',
  'INTERNAL_IP',
  'HOSTNAME',
  'TERM',
  'LANG',
  'PWD',
  'TZ',
  'TIMEZONE',
]);

describe('the game-panel egg (PTDL_v2)', () => {
  const variable = (name: string) => egg.variables.find((v) => v.env_variable === name)!;

  test('is what the Pterodactyl and Pelican importers take', () => {
    assert.equal(egg.meta.version, 'PTDL_v2');
    assert.match(egg.author, /^[^@\s]+@[^@\s]+$/, 'the panel requires an email as author');
    for (const [label, image] of Object.entries(egg.docker_images)) assert.match(`${label}|${image}`, /^[\w#./\- ]*\|?~?[\w./\-:@ ]*$/);
    for (const key of ['files', 'startup', 'logs'] as const)
      assert.doesNotThrow(() => JSON.parse(egg.config[key]), `config.${key} is JSON text`);
    assert.equal(egg.scripts.installation.entrypoint, 'bash');
    for (const v of egg.variables) {
      assert.match(v.env_variable, /^\w{1,191}$/);
      assert.ok(!RESERVED.includes(v.env_variable), `${v.env_variable} is reserved by a panel`);
      assert.equal(v.field_type, 'text');
      assert.deepEqual(
        ruleProblems(v.rules, v.default_value).filter((p) => p !== 'required'),
        [],
        `${v.env_variable}'s default`,
      );
    }
  });

  test('secrets are hidden from users and stay out of the startup line and the config the panel writes', () => {
    for (const name of SECRET_VARIABLES) {
      assert.equal(variable(name).user_viewable, false, `${name} is not shown to users`);
      assert.equal(variable(name).user_editable, false);
      assert.ok(!egg.startup.includes(name), 'the yolk prints the startup line');
      assert.ok(!egg.config.files.includes(name), 'the config file stays free of secrets');
    }
  });

  test("its games and consoles are porter's, and every placeholder names a variable", () => {
    const games = Object.entries(GAMES).filter(([, g]) => 'console' in g);
    const inList = (name: string) => /in:([^|]+)/.exec(variable(name).rules)![1]!.split(',');
    assert.deepEqual(inList('GAME').sort(), games.map(([name]) => name).sort());
    assert.deepEqual(
      inList('GAME_CONSOLE').sort(),
      [...new Set(games.map(([, g]) => (g as { console: { transport: string } }).console.transport))].sort(),
    );
    for (const [, name] of egg.config.files.matchAll(/{{server\.build\.env\.(\w+)}}/g)) assert.ok(variable(name!), `${name} is a variable`);
  });

  test('stops with a signal both daemons send, drained before Pelican kills', () => {
    // Pterodactyl's Wings knows SIGABRT, SIGINT, SIGTERM (else SIGKILL); Pelican's adds C.
    assert.match(egg.config.stop, /^\^(SIGTERM|SIGINT)$/);
    const template = /cat > porter\.json <<'JSON'\n([\s\S]*?)\nJSON/.exec(egg.scripts.installation.script)![1]!;
    const drainMs = (JSON.parse(template) as { shutdown: { drainMs: number } }).shutdown.drainMs;
    assert.ok(drainMs <= 8000, `drainMs ${drainMs} leaves room before Pelican's SIGKILL at 10 s`);
    assert.match(egg.startup, /^exec /, "exec: porter replaces the yolk's bash, so tini's signal reaches it and nothing outlives it");
  });
});

describe('the egg, run as Wings runs it (podman)', { skip, timeout: 1_800_000 }, () => {
  let api: FakeSellerApi;
  let rcon: FakeRconServer;
  let files: Server;
  let work = '';
  let serverDir = '';
  let yolk = '';
  let base = '';
  let env: Record<string, string> = {};
  let installOutput = '';
  const suffix = `${process.pid}-${Date.now()}`;
  const containers: string[] = [];
  let current = '';

  /** What Wings does before a start and at it; resolves once the console shows the egg's done line. */
  async function startServer(tag: string): Promise<string> {
    applyConfigFiles(egg, env, serverDir);
    await run('chown', ['-R', `${WINGS_UID}:${WINGS_UID}`, serverDir]);
    const name = `porter-egg-${tag}-${suffix}`;
    containers.push(name);
    await podman([
      'run',
      '-d',
      '-t',
      '-i',
      '--name',
      name,
      ...RUN_FLAGS,
      '--read-only',
      '--tmpfs',
      '/tmp:rw,exec,nosuid',
      '--user',
      `${WINGS_UID}:${WINGS_UID}`,
      '--security-opt',
      'no-new-privileges',
      ...WINGS_CAP_DROP.flatMap((cap) => ['--cap-drop', cap]),
      '-v',
      `${serverDir}:/home/container`,
      ...envFlags(env),
      yolk,
    ]);
    current = name;
    const done = (JSON.parse(egg.config.startup) as { done: string }).done;
    await waitFor(async () => (await logsOf(name)).split(/\r?\n/).some((line) => line.includes(done)), { ...WAIT, what: 'the done line' });
    return name;
  }

  const settled = (id: string) =>
    waitFor(() => api.commands().find((c) => c.id === id && (c.status === 'EXECUTED' || c.status === 'FAILED')), {
      ...WAIT,
      what: `command ${id}`,
    });

  before(
    async () => {
      base = await ensureNodeBase();
      yolk = await buildYolk(base);
      work = mkdtempSync(join(tmpdir(), 'porter-egg-'));
      const tarball = basename(await releaseTarball(work));
      // The release tarball URL the owner puts in PORTER_PACKAGE.
      files = createServer((req, res) => {
        if (req.url !== `/${tarball}`) return void res.writeHead(404).end();
        res.writeHead(200, { 'content-type': 'application/gzip' }).end(readFileSync(join(work, 'release', tarball)));
      });
      await new Promise<void>((resolve) => files.listen(0, '127.0.0.1', resolve));
      api = await startSellerApi();
      rcon = await startRconServer({ password: PASSWORD, flavour: 'minecraft', players: ['Steve'] });
      env = wingsEnvironment(egg, {
        STORE_API_URL: api.url,
        STORE_SERVER_ID: SIM_SERVER_ID,
        PORTER_API_TOKEN: SIM_TOKEN,
        // The host network here: the simulator's loopback address stands in for the bridge gateway.
        GAME_CONSOLE_HOST: rcon.host,
        GAME_CONSOLE_PORT: String(rcon.port),
        PORTER_RCON_PASSWORD: PASSWORD,
        PORTER_PACKAGE: `http://127.0.0.1:${(files.address() as AddressInfo).port}/${tarball}`,
      });
      for (const v of egg.variables)
        assert.deepEqual(ruleProblems(v.rules, env[v.env_variable]!), [], `${v.env_variable} as the panel validates it`);
      serverDir = mkdtempSync(join(tmpdir(), 'porter-egg-server-'));
    },
    { timeout: 1_500_000 },
  );

  after(async () => {
    await removeAll(containers);
    await Promise.all([api?.close(), rcon?.close(), new Promise((resolve) => (files ? files.close(resolve) : resolve(undefined)))]);
    for (const dir of [work, serverDir]) if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test('the installation script installs porter from the release tarball into /mnt/server', async (t) => {
    const install = mkdtempSync(join(tmpdir(), 'porter-egg-install-'));
    try {
      writeFileSync(join(install, 'install.sh'), egg.scripts.installation.script.replace(/\r\n/g, '\n'), { mode: 0o644 });
      // This machine's npm registry settings, as the installer's own npm would have its registry.
      const registry = (await run('npm', ['config', 'get', 'registry'])).stdout.trim();
      const cafile = (await run('npm', ['config', 'get', 'cafile'])).stdout.trim();
      const npmrc = join(install, 'npmrc');
      writeFileSync(npmrc, `registry=${registry}\n${existsSync(cafile) ? `cafile=${cafile}\n` : ''}`);
      const name = `porter-egg-installer-${suffix}`;
      containers.push(name);
      const started = performance.now();
      const result = await podman(
        [
          'run',
          '-t',
          '--name',
          name,
          ...RUN_FLAGS,
          '--tmpfs',
          '/tmp:rw,exec,nosuid',
          '-v',
          `${serverDir}:/mnt/server`,
          '-v',
          `${install}:/mnt/install`,
          '-v',
          `${npmrc}:/root/.npmrc:ro`,
          ...(existsSync(cafile) ? ['-v', `${cafile}:${cafile}:ro`] : []),
          ...envFlags(env),
          base,
          egg.scripts.installation.entrypoint,
          '/mnt/install/install.sh',
        ],
        { timeoutMs: 600_000, allowFailure: true },
      );
      t.diagnostic(`installation script: ${((performance.now() - started) / 1000).toFixed(1)} s`);
      installOutput = result.stdout + result.stderr;
      assert.equal(result.code, 0, installOutput.slice(-4000));
      assert.match(installOutput, /porter: installed porter \d+\.\d+\.\d+/);
      for (const file of ['porter.json', 'node_modules/.bin/porter', 'node_modules/porter-connector/dist/bundle/porter.js'])
        assert.ok(existsSync(join(serverDir, file)), file);
      for (const secret of [SIM_TOKEN, PASSWORD]) assert.ok(!installOutput.includes(secret), 'no secret in the install output');
    } finally {
      rmSync(install, { recursive: true, force: true });
    }
  });

  test('the panel fills the config from the variables, and porter loads it', async () => {
    applyConfigFiles(egg, env, serverDir);
    const raw = JSON.parse(readFileSync(join(serverDir, 'porter.json'), 'utf8')) as { servers: Array<{ executor: { port: unknown } }> };
    assert.equal(raw.servers[0]!.executor.port, rcon.port, 'a number, as Wings writes an integer');
    const config = await parseConfig(raw, serverDir, { PORTER_API_TOKEN: SIM_TOKEN, PORTER_RCON_PASSWORD: PASSWORD });
    assert.equal(config.api.baseUrl, api.url);
    assert.equal(config.servers[0]!.id, SIM_SERVER_ID);
    const text = readFileSync(join(serverDir, 'porter.json'), 'utf8');
    for (const secret of [SIM_TOKEN, PASSWORD]) assert.ok(!text.includes(secret), 'no secret in the config file');
  });

  test('started as Wings starts it (terminal, read-only root, uid 988): it logs its start, delivers, and prints no secret', async () => {
    const name = await startServer('first');
    const id = api.enqueue(SIM_SERVER_ID, { command: 'give Steve diamond 1' });
    assert.equal((await settled(id)).status, 'EXECUTED');
    assert.equal(rcon.executed.filter((e) => e.command === 'give Steve diamond 1').length, 1);
    const output = await logsOf(name);
    assert.match(
      output,
      /:\/home\/container\$ exec \.\/node_modules\/\.bin\/porter run -c porter\.json/,
      'the yolk printed the startup line',
    );
    await waitFor(async () => /delivered/.test(await logsOf(name)), { ...WAIT, what: 'the delivery on the console' });
    const uid = (await podman(['top', name, 'user', 'comm'])).stdout;
    assert.match(uid, new RegExp(`^${WINGS_UID}\\s+node$`, 'm'), 'porter runs as the uid Wings gives');
    for (const secret of [SIM_TOKEN, PASSWORD]) assert.ok(!(await logsOf(name)).includes(secret), 'no secret on the console');
  });

  test("the panel's stop with a command in hand: finished, reported, exit 0, before Pelican's SIGKILL", async () => {
    const slow = 'say held-for-panel-stop';
    const answer = gate();
    rcon.setHandler((command) => (command === slow ? { text: '', after: answer.promise } : undefined));
    const id = api.enqueue(SIM_SERVER_ID, { command: slow });
    await waitFor(() => rcon.executed.some((e) => e.command === slow), { ...WAIT, what: 'the command to reach the game' });
    const signal = egg.config.stop.slice(1);
    const stopping = pelicanStop(current, signal);
    await waitFor(async () => /stopping/.test(await logsOf(current)), { ...WAIT, what: 'porter to take the signal' });
    answer.open();
    const stop = await stopping;
    rcon.setHandler(undefined);
    assert.deepEqual(stop, { killed: false, exitCode: 0 });
    const command = api.commands().find((c) => c.id === id)!;
    assert.equal(command.status, 'EXECUTED');
    assert.equal(command.reports.filter((r) => r.status === 200).length, 1);
  });

  test('killed from the panel mid-command, then started again: nothing runs twice', async () => {
    await podman(['rm', current]);
    const name = await startServer('second');
    const held = 'give Steve netherite_ingot 1';
    const answer = gate();
    rcon.setHandler((command) => (command === held ? { text: '', after: answer.promise } : undefined));
    const id = api.enqueue(SIM_SERVER_ID, { command: held });
    await waitFor(() => rcon.executed.some((e) => e.command === held), { ...WAIT, what: 'the command to reach the game' });
    await podman(['kill', '-s', 'KILL', name]);
    await podman(['rm', name]);
    rcon.setHandler(undefined);
    answer.open();
    await startServer('third');
    assert.equal((await settled(id)).status, 'FAILED', 'the journal in the server folder reports it instead of running it again');
    const next = api.enqueue(SIM_SERVER_ID, { command: 'give Steve apple 1' });
    assert.equal((await settled(next)).status, 'EXECUTED');
    assert.equal(rcon.executed.filter((e) => e.command === held).length, 1);
    for (const secret of [SIM_TOKEN, PASSWORD]) assert.ok(!(await logsOf(current)).includes(secret));
    // The folder the owner sees in the panel's file manager holds no secret either.
    const list = await run('grep', ['-rl', '--exclude-dir=node_modules', SIM_TOKEN, serverDir]);
    assert.equal(list.stdout, '', 'no file of the server folder holds the token');
  });
});
