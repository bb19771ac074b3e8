import assert from 'node:assert/strict';
import {
  chmodSync,
  createReadStream,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { parseConfig } from '../../src/config/load.js';
import { GAMES } from '../../src/games/registry.js';
import { startRconServer, type FakeRconServer } from '../../src/sim/faults/rcon-server.js';
import { SIM_SERVER_ID, SIM_TOKEN, startSellerApi, type FakeSellerApi } from '../../src/sim/seller-api.js';
import { gate } from '../integration/harness.js';
import { waitFor } from '../helpers/wait-for.js';
import { ensureDebianBase } from './node-base.js';
import {
  applyConfigFiles,
  buildInstaller,
  buildYolk,
  envFlags,
  gabsSet,
  pelicanStop,
  ruleProblems,
  sjsonSet,
  WINGS_CAP_DROP,
  WINGS_UID,
  wingsEnvironment,
  YOLKS,
  type Egg,
  type JsonObject,
  type Panel,
} from './panel.js';
import { buildRelease } from './packed.js';
import { engineMissing, logsOf, podman, removeAll, RUN_FLAGS } from './podman.js';
import { projectUrls } from './project-urls.js';
import { readRepoFile, repoPath, repoRoot } from './repo.js';
import { run } from './run.js';

/**
 * The game-panel egg a release carries (scripts/release/egg.mjs writes release/egg-porter.json),
 * read as the panels' importers read it and run as each panel's Wings runs an egg (panel.ts says
 * what that is, from their sources): Pelican's Wings (sjson paths, pelican-eggs' yolk that
 * `eval`s the startup line) and Pterodactyl's (gabs paths, pterodactyl's yolk that runs it with
 * `exec env`). The installation script fetches the single executable of the release from
 * PORTER_RELEASE_URL, here a loopback server holding a release built into a temp folder, and
 * checks it against SHA256SUMS; then, before each start, the configuration files are rewritten
 * from the variables and the folder chowned to Wings' uid; then the server container with a
 * terminal, a read-only root and that uid, on a Debian with no Node. Against the simulators: it
 * delivers, prints no secret, stops clean on the panel's signal within Pelican's 10 s, and killed
 * mid-command and started again it runs nothing twice. A tampered download installs nothing.
 */

const skip = engineMissing();
type Package = { version: string; repository: { url: string } };
const pkg = JSON.parse(readRepoFile('package.json')) as Package;
const { buildEgg } = (await import(pathToFileURL(repoPath('scripts/release/egg.mjs')).href)) as {
  buildEgg: (pkg: Package, root: string) => Promise<Egg>;
};
const egg = await buildEgg(pkg, repoRoot);
const PANELS: readonly Panel[] = ['pelican', 'pterodactyl'];
const PASSWORD = 'panel-rcon-password-93c1';
const SECRETS = [SIM_TOKEN, PASSWORD];
const WAIT = { timeoutMs: 60_000, intervalMs: 100 } as const;
const SECRET_VARIABLES = ['PORTER_API_TOKEN', 'PORTER_RCON_PASSWORD'];
/** What only the server's owner can know: the variables left without a default. */
const OWNER_VARIABLES = ['STORE_API_URL', 'STORE_SERVER_ID', ...SECRET_VARIABLES];
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
const variable = (name: string) => egg.variables.find((v) => v.env_variable === name)!;
/** The porter.json the installation script writes when there is none. */
const configTemplate = () => /cat > porter\.json << ?'JSON'\n([\s\S]*?)\nJSON/.exec(egg.scripts.installation.script)![1]!;

describe('the game-panel egg (PTDL_v2)', () => {
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

  test("installs this version's release as it comes: no variable is left empty but the owner's", async () => {
    assert.equal(variable('PORTER_RELEASE_URL').default_value, (await projectUrls()).releaseBase);
    for (const v of egg.variables.filter((v) => !OWNER_VARIABLES.includes(v.env_variable)))
      assert.deepEqual(ruleProblems(v.rules, v.default_value), [], `${v.env_variable} works as it comes`);
    assert.match(egg.scripts.installation.script, /\$\{PORTER_RELEASE_URL%\/\}/, 'the installer fetches from the release URL variable');
  });

  test('the owner sets the token and the password, and neither reaches the startup line or the config', () => {
    for (const name of SECRET_VARIABLES) {
      assert.equal(variable(name).user_viewable, true, `${name}: the server's owner sees it`);
      assert.equal(variable(name).user_editable, true, `${name}: the server's owner sets it`);
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

  test('stops with a signal both daemons send and a child of bash outlives, drained before Pelican kills', () => {
    // Both Wings know SIGABRT, SIGINT and SIGTERM. pelican-eggs' yolk runs porter as a child of
    // bash: bash waits out a SIGINT its child handles, and dies at once of a SIGTERM.
    assert.equal(egg.config.stop, '^SIGINT');
    const drainMs = (JSON.parse(configTemplate()) as { shutdown: { drainMs: number } }).shutdown.drainMs;
    assert.ok(drainMs <= 8000, `drainMs ${drainMs} leaves room before Pelican's SIGKILL at 10 s`);
  });

  describe("the emulated Wings parsers agree with their libraries' documented paths", () => {
    const doc = () => ({ name: { last: 'x' }, children: ['Sara', 'Alex'], friends: [{ last: 'Murphy' }], port: 1 });
    test("sjson (tidwall/sjson README's examples): dotted indexes, -1 appends, `[0]` is a key", () => {
      const d: JsonObject = doc();
      sjsonSet(d, 'children.1', 'Ann');
      sjsonSet(d, 'friends.0.last', 'Craig');
      sjsonSet(d, 'children.-1', 'Jack');
      sjsonSet(d, 'friends[0].last', 'Lee');
      sjsonSet(d, 'port', '25575');
      sjsonSet(d, 'name.last', '42');
      assert.deepEqual(d, {
        name: { last: '42' },
        children: ['Sara', 'Ann', 'Jack'],
        friends: [{ last: 'Craig' }],
        port: 25575,
        'friends[0]': { last: 'Lee' },
      });
    });
    test("gabs (Pterodactyl's setValueAtPath): `[0]` and dotted indexes reach the element, integers become numbers", () => {
      const d: JsonObject = doc();
      gabsSet(d, 'friends[0].last', 'Lee');
      gabsSet(d, 'children.1', 'Ann');
      gabsSet(d, 'name.last', '42');
      assert.deepEqual(d, { name: { last: 42 }, children: ['Sara', 'Ann'], friends: [{ last: 'Lee' }], port: 1 });
      assert.throws(() => gabsSet(d, 'children.5', 'x'), /failed to resolve path segment/);
    });
  });

  for (const panel of PANELS)
    test(`${panel}'s Wings fills porter.json from the variables, and porter loads it`, async () => {
      const dir = mkdtempSync(join(tmpdir(), 'porter-egg-config-'));
      try {
        writeFileSync(join(dir, 'porter.json'), configTemplate());
        const env = wingsEnvironment(egg, {
          STORE_API_URL: 'https://store.example.com/api',
          STORE_SERVER_ID: SIM_SERVER_ID,
          GAME_CONSOLE_HOST: '172.18.0.1',
          GAME_CONSOLE_PORT: '27015',
          GAME: 'rust',
          GAME_CONSOLE: 'webrcon',
          PORTER_API_TOKEN: SIM_TOKEN,
          PORTER_RCON_PASSWORD: PASSWORD,
        });
        applyConfigFiles(egg, env, dir, panel);
        const text = readFileSync(join(dir, 'porter.json'), 'utf8');
        const raw = JSON.parse(text) as { servers: Array<{ executor: { port: unknown } }> };
        assert.equal(raw.servers[0]!.executor.port, 27015, 'a number, as the file had one');
        const config = await parseConfig(raw, dir, { PORTER_API_TOKEN: SIM_TOKEN, PORTER_RCON_PASSWORD: PASSWORD });
        assert.equal(config.api.baseUrl, 'https://store.example.com/api');
        assert.equal(config.servers.length, 1);
        const server = config.servers[0]!;
        assert.equal(server.id, SIM_SERVER_ID);
        assert.deepEqual(
          { type: server.executor.type, host: (server.executor as { host?: string }).host, preset: server.players?.preset },
          { type: 'webrcon', host: '172.18.0.1', preset: 'rust' },
        );
        for (const secret of SECRETS) assert.ok(!text.includes(secret), 'no secret in the config file');
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });

  test("the installation script picks the executable of the node's architecture (uname -m)", async () => {
    // The script on this machine's bash, /mnt/server a temp folder, with stand-ins for uname and
    // for curl (which copies from a folder holding a release of two stand-in executables).
    const root = mkdtempSync(join(tmpdir(), 'porter-egg-arch-'));
    try {
      const [bin, release, server] = ['bin', 'release', 'server'].map((name) => join(root, name)) as [string, string, string];
      for (const dir of [bin, release, server]) mkdirSync(dir);
      const sums = ['x64', 'arm64'].map((arch) => {
        const body = `#!/bin/sh\necho 9.9.9-${arch}\n`;
        writeFileSync(join(release, `porter-9.9.9-linux-${arch}`), body);
        return `${createHash('sha256').update(body).digest('hex')}  porter-9.9.9-linux-${arch}\n`;
      });
      writeFileSync(join(release, 'SHA256SUMS'), sums.join(''));
      writeFileSync(join(bin, 'uname'), '#!/bin/sh\necho "$FAKE_MACHINE"\n', { mode: 0o755 });
      // The script's fetch ends with `--output FILE URL`.
      writeFileSync(join(bin, 'curl'), `#!/bin/sh\nwhile [ $# -gt 2 ]; do shift; done\nexec cp "${release}/\${2##*/}" "$1"\n`, {
        mode: 0o755,
      });
      const script = join(root, 'install.sh');
      writeFileSync(script, egg.scripts.installation.script.replaceAll('/mnt/server', server));
      const install = (machine: string) =>
        run('bash', [script], {
          env: { PATH: `${bin}:${process.env.PATH!}`, FAKE_MACHINE: machine, PORTER_RELEASE_URL: 'http://mirror.invalid/porter/' },
        });
      for (const [machine, arch] of [
        ['x86_64', 'x64'],
        ['aarch64', 'arm64'],
      ] as const) {
        const result = await install(machine);
        assert.equal(result.code, 0, result.stdout + result.stderr);
        assert.match(result.stdout, new RegExp(`^porter: installed porter-9\\.9\\.9-linux-${arch}, porter 9\\.9\\.9-${arch}$`, 'm'));
        assert.match(result.stdout, new RegExp(`^porter: fetching http://mirror\\.invalid/porter/porter-9\\.9\\.9-linux-${arch}$`, 'm'));
      }
      const other = await install('riscv64');
      assert.equal(other.code, 1);
      assert.match(other.stdout, /^porter: this machine is riscv64, and porter's release has executables for x86_64 and aarch64 only/m);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  for (const panel of PANELS)
    test(`${panel}'s yolk entrypoint runs the startup line, printing it with no secret`, async () => {
      // The entrypoint on this machine's bash, its /home/container a temp folder, and a stand-in
      // for the program the line names that reports its arguments and whether it has the secrets.
      const home = mkdtempSync(join(tmpdir(), 'porter-egg-yolk-'));
      try {
        const program = /(\.\/\S+)/.exec(egg.startup)![1]!;
        const stand = join(home, program);
        mkdirSync(dirname(stand), { recursive: true });
        writeFileSync(stand, '#!/bin/sh\necho "ran: $*"\necho "secrets: ${PORTER_API_TOKEN:+token} ${PORTER_RCON_PASSWORD:+password}"\n');
        chmodSync(stand, 0o755);
        writeFileSync(join(home, 'entrypoint.sh'), YOLKS[panel].entrypoint.replaceAll('/home/container', home));
        const env = wingsEnvironment(egg, { PORTER_API_TOKEN: SIM_TOKEN, PORTER_RCON_PASSWORD: PASSWORD });
        const result = await run('bash', [join(home, 'entrypoint.sh')], { env: { PATH: process.env.PATH!, ...env } });
        const output = result.stdout + result.stderr;
        assert.equal(result.code, 0, output);
        const prompt = YOLKS[panel].prompt.replaceAll('/home/container', home);
        assert.ok(output.includes(`${prompt}${egg.startup}`), `the yolk printed the startup line:\n${output}`);
        assert.match(output, /^ran: run -c porter\.json$/m);
        assert.match(output, /^secrets: token password$/m, 'porter has both secrets in its environment');
        for (const secret of SECRETS) assert.ok(!output.includes(secret), 'no secret on the console');
      } finally {
        rmSync(home, { recursive: true, force: true });
      }
    });
});

describe("the release's egg, installed and run as each panel's Wings runs it (podman)", { skip, timeout: 1_800_000 }, () => {
  let api: FakeSellerApi;
  let rcon: FakeRconServer;
  let files: Server;
  let work = '';
  let out = '';
  let released: Egg;
  let installer = '';
  const yolks = {} as Record<Panel, string>;
  let mirror = '';
  /** Serve a damaged x64 executable, as a tampered mirror would. */
  let tampered = false;
  const suffix = `${process.pid}-${Date.now()}`;
  const containers: string[] = [];
  const dirs: string[] = [];

  const freshDir = (name: string) => {
    const dir = mkdtempSync(join(tmpdir(), `porter-egg-${name}-`));
    dirs.push(dir);
    return dir;
  };

  const environment = (overrides: Record<string, string> = {}) =>
    wingsEnvironment(released, {
      STORE_API_URL: api.url,
      STORE_SERVER_ID: SIM_SERVER_ID,
      PORTER_API_TOKEN: SIM_TOKEN,
      // The host network here: the simulator's loopback address stands in for the bridge gateway.
      GAME_CONSOLE_HOST: rcon.host,
      GAME_CONSOLE_PORT: String(rcon.port),
      PORTER_RCON_PASSWORD: PASSWORD,
      PORTER_RELEASE_URL: mirror,
      ...overrides,
    });

  /** The installation script as Wings runs it; resolves with its exit code and console output. */
  async function install(serverDir: string, tag: string): Promise<{ code: number | null; output: string; ms: number }> {
    const scripts = freshDir('install');
    writeFileSync(join(scripts, 'install.sh'), released.scripts.installation.script.replace(/\r\n/g, '\n'), { mode: 0o644 });
    const name = `porter-egg-installer-${tag}-${suffix}`;
    containers.push(name);
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
        `${scripts}:/mnt/install`,
        ...envFlags(environment()),
        installer,
        released.scripts.installation.entrypoint,
        '/mnt/install/install.sh',
      ],
      { timeoutMs: 300_000, allowFailure: true },
    );
    return { code: result.code, output: result.stdout + result.stderr, ms: result.ms };
  }

  /** What Wings does before a start and at it; resolves once the console shows the egg's done line. */
  async function startServer(panel: Panel, serverDir: string, tag: string): Promise<string> {
    applyConfigFiles(released, environment(), serverDir, panel);
    await run('chown', ['-R', `${WINGS_UID}:${WINGS_UID}`, serverDir]);
    const name = `porter-egg-${panel}-${tag}-${suffix}`;
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
      ...envFlags(environment()),
      yolks[panel],
    ]);
    const done = (JSON.parse(released.config.startup) as { done: string }).done;
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
      const base = await ensureDebianBase('bare');
      installer = await buildInstaller(base);
      for (const panel of PANELS) yolks[panel] = await buildYolk(base, panel);
      work = mkdtempSync(join(tmpdir(), 'porter-egg-'));
      out = join(work, 'release');
      await buildRelease(out, ['npm', 'sea', 'sums', 'egg']);
      released = JSON.parse(readFileSync(join(out, 'egg-porter.json'), 'utf8')) as Egg;
      assert.deepEqual(released, egg, 'the released egg is the one the checks above read');
      // A mirror of the release: the folder at a path of its own, as PORTER_RELEASE_URL names it.
      const prefix = `/mirror/porter/v${pkg.version}/`;
      files = createServer((req, res) => {
        const name = req.url?.startsWith(prefix) ? req.url.slice(prefix.length) : '';
        if (!readdirSync(out).includes(name)) return void res.writeHead(404).end();
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        const stream = createReadStream(join(out, name));
        if (tampered && name.endsWith('-linux-x64')) stream.on('end', () => res.end('\0tampered'));
        stream.pipe(res, { end: !(tampered && name.endsWith('-linux-x64')) });
      });
      await new Promise<void>((resolve) => files.listen(0, '127.0.0.1', resolve));
      mirror = `http://127.0.0.1:${(files.address() as AddressInfo).port}${prefix.slice(0, -1)}`;
      api = await startSellerApi();
      rcon = await startRconServer({ password: PASSWORD, flavour: 'minecraft', players: ['Steve'] });
      for (const v of released.variables)
        assert.deepEqual(ruleProblems(v.rules, environment()[v.env_variable]!), [], `${v.env_variable} as the panel validates it`);
    },
    { timeout: 1_500_000 },
  );

  after(async () => {
    await removeAll(containers);
    await Promise.all([api?.close(), rcon?.close(), new Promise((resolve) => (files ? files.close(resolve) : resolve(undefined)))]);
    for (const dir of [work, ...dirs]) if (dir) rmSync(dir, { recursive: true, force: true });
  });

  for (const panel of PANELS)
    describe(`on ${panel}`, () => {
      let serverDir = '';
      let current = '';

      test('the installation script installs the executable from PORTER_RELEASE_URL, checked against SHA256SUMS', async (t) => {
        serverDir = freshDir(`server-${panel}`);
        const { code, output, ms } = await install(serverDir, panel);
        t.diagnostic(`installation script (${panel}): ${(ms / 1000).toFixed(1)} s`);
        assert.equal(code, 0, output.slice(-4000));
        assert.match(
          output,
          new RegExp(`porter: installed porter-${pkg.version}-linux-x64, porter ${pkg.version.replaceAll('.', '\\.')}\\r?\\n`),
        );
        assert.ok((statSync(join(serverDir, 'porter')).mode & 0o111) !== 0, 'porter is executable');
        assert.deepEqual(readdirSync(serverDir).sort(), ['porter', 'porter.json'], 'the executable and the config, nothing else');
        for (const secret of SECRETS) assert.ok(!output.includes(secret), 'no secret in the install output');
      });

      test(`started as Wings starts it on the ${panel} yolk (no Node, read-only root, uid 988): it delivers and prints no secret`, async () => {
        current = await startServer(panel, serverDir, 'first');
        const command = `give Steve diamond_${panel} 1`;
        const id = api.enqueue(SIM_SERVER_ID, { command });
        assert.equal((await settled(id)).status, 'EXECUTED');
        assert.equal(rcon.executed.filter((e) => e.command === command).length, 1);
        const config = readFileSync(join(serverDir, 'porter.json'), 'utf8');
        assert.equal((JSON.parse(config) as { servers: Array<{ executor: { port: unknown } }> }).servers[0]!.executor.port, rcon.port);
        await waitFor(async () => /delivered/.test(await logsOf(current)), { ...WAIT, what: 'the delivery on the console' });
        const output = await logsOf(current);
        assert.ok(output.includes(`${YOLKS[panel].prompt}${released.startup}`), 'the yolk printed the startup line');
        assert.match(
          (await podman(['top', current, 'user', 'args'])).stdout,
          new RegExp(`^${WINGS_UID}\\s+\\./porter run`, 'm'),
          'porter runs as Wings’ uid',
        );
        for (const secret of SECRETS) {
          assert.ok(!output.includes(secret), 'no secret on the console');
          assert.ok(!config.includes(secret), 'no secret in the config file');
        }
      });

      test("the panel's stop with a command in hand: finished, reported, exit 0, before Pelican's SIGKILL", async () => {
        const slow = `say held-for-${panel}-stop`;
        const answer = gate();
        rcon.setHandler((command) => (command === slow ? { text: '', after: answer.promise } : undefined));
        const id = api.enqueue(SIM_SERVER_ID, { command: slow });
        await waitFor(() => rcon.executed.some((e) => e.command === slow), { ...WAIT, what: 'the command to reach the game' });
        const stopping = pelicanStop(current, released.config.stop.slice(1));
        await waitFor(async () => /stopping/.test(await logsOf(current)), { ...WAIT, what: 'porter to take the signal' });
        answer.open();
        const stop = await stopping;
        rcon.setHandler(undefined);
        assert.deepEqual(stop, { killed: false, exitCode: 0 });
        const command = api.commands().find((c) => c.id === id)!;
        assert.equal(command.status, 'EXECUTED');
        assert.equal(command.reports.filter((r) => r.status === 200).length, 1);
      });

      if (panel === 'pelican')
        test('killed from the panel mid-command, then started again: nothing runs twice', async (t) => {
          // The panel's stop, whatever fails: the next panel's porter must be the only one pulling.
          t.after(() => pelicanStop(current, released.config.stop.slice(1)));
          await podman(['rm', current]);
          const name = await startServer(panel, serverDir, 'second');
          const held = 'give Steve netherite_ingot 1';
          const answer = gate();
          rcon.setHandler((command) => (command === held ? { text: '', after: answer.promise } : undefined));
          const id = api.enqueue(SIM_SERVER_ID, { command: held });
          await waitFor(() => rcon.executed.some((e) => e.command === held), { ...WAIT, what: 'the command to reach the game' });
          await podman(['kill', '-s', 'KILL', name]);
          await podman(['rm', name]);
          rcon.setHandler(undefined);
          answer.open();
          current = await startServer(panel, serverDir, 'third');
          assert.equal((await settled(id)).status, 'FAILED', 'the journal in the server folder reports it instead of running it again');
          const next = api.enqueue(SIM_SERVER_ID, { command: 'give Steve apple 1' });
          assert.equal((await settled(next)).status, 'EXECUTED');
          assert.equal(rcon.executed.filter((e) => e.command === held).length, 1);
          for (const secret of SECRETS) assert.ok(!(await logsOf(current)).includes(secret));
          // The folder the owner sees in the panel's file manager holds no secret either.
          // (The executable carries porter's simulators, and their token, inside.)
          const list = await run('grep', ['-rl', '--exclude=porter', SIM_TOKEN, serverDir]);
          assert.equal(list.stdout, '', 'no file of the server folder holds the token');
        });
    });

  test('a tampered download fails the install with a line that says so, and installs nothing', async () => {
    const serverDir = freshDir('server-tampered');
    tampered = true;
    try {
      const { code, output } = await install(serverDir, 'tampered');
      assert.notEqual(code, 0, output);
      assert.match(
        output,
        new RegExp(
          `porter: porter-${pkg.version}-linux-x64 from ${mirror} does not match its SHA256SUMS line .*: the download was damaged or altered, and nothing was installed`,
        ),
      );
      assert.deepEqual(readdirSync(serverDir), [], 'no executable, no partial download');
      assert.ok(!existsSync(join(serverDir, 'porter')));
    } finally {
      tampered = false;
    }
  });
});
