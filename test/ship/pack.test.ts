import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startRconServer } from '../../src/sim/rcon-server.js';
import { SIM_SERVER_ID, SIM_TOKEN, startSellerApi } from '../../src/sim/seller-api.js';
import { waitFor } from '../helpers/wait-for.js';
import { installPackedPorter } from './packed.js';
import { repoRoot } from './repo.js';
import { run, which } from './run.js';
import { makeUnitRoot } from './unit-root.js';

/**
 * The package as a user gets it: `npm pack`, then `npm install -g --prefix` of the tarball into a
 * fresh prefix (dependencies come from the registry, so this needs the network and a generous
 * timeout), then the installed `porter` is run. The prefix is <root>/usr/local of a throw-away
 * root, so `systemd-analyze verify --root` checks the shipped unit against the real install.
 * Figures (help time, time to first pull) are printed as test diagnostics.
 */

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

describe('npm pack → npm install -g → porter', { timeout: 240_000 }, () => {
  let work = '';
  let root = '';
  let porter = '';
  let packageDir = '';
  let installOutput = '';

  before(async () => {
    work = mkdtempSync(join(tmpdir(), 'porter-pack-'));
    root = makeUnitRoot('absent');
    const prefix = join(root, 'usr/local');
    installOutput = await installPackedPorter(work, prefix);
    porter = join(prefix, 'bin/porter');
    packageDir = join(prefix, 'lib/node_modules/porter-connector');
  });

  after(() => {
    for (const dir of [work, root]) if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test('installs a `porter` whose --help exits 0 with the usage and every command', async (t) => {
    const result = await run(porter, ['--help'], { timeoutMs: 30_000 });
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /^Usage: porter \[options\] \[command\]/m);
    for (const command of ['run', 'check', 'rcon', 'players', 'demo'])
      assert.match(result.stdout, new RegExp(`^  ${command}\\b`, 'm'), command);
    assert.match(result.stdout, /78/, 'the exit codes are explained');

    const times: number[] = [];
    for (let i = 0; i < 5; i++) times.push((await run(porter, ['--help'], { timeoutMs: 30_000 })).ms);
    const baseline: number[] = [];
    for (let i = 0; i < 5; i++) baseline.push((await run(process.execPath, ['-e', ''], { timeoutMs: 30_000 })).ms);
    t.diagnostic(`porter --help: median ${median(times).toFixed(0)} ms over 5 runs (node -e '' alone: ${median(baseline).toFixed(0)} ms)`);
    // Over what node itself takes to start, so a loaded machine slows both sides alike.
    assert.ok(median(times) - median(baseline) < 3000, `porter --help takes ${median(times).toFixed(0)} ms`);
  });

  test('ships what users need and nothing from the source tree', () => {
    for (const file of ['package.json', 'config.example.json', 'config.schema.json', 'systemd/porter.service', 'dist/bundle/porter.js']) {
      assert.ok(existsSync(join(packageDir, file)), `${file} is installed`);
    }
    // The unit's Documentation= opens these: they must be where npm installed the package.
    const unit = readFileSync(join(packageDir, 'systemd/porter.service'), 'utf8');
    for (const [, path] of unit.matchAll(/file:(\/usr\/local\/\S+)/g))
      assert.ok(existsSync(join(root, path!)), `Documentation= ${path} is installed`);
    for (const absent of ['src', 'test', 'dist/test', 'tsconfig.json', '.ci', 'Dockerfile', 'state']) {
      assert.ok(!existsSync(join(packageDir, absent)), `${absent} is not shipped`);
    }
    // Every library is inside the bundle: installing porter installs porter alone.
    assert.ok(!existsSync(join(packageDir, 'node_modules')), 'no dependency is installed');
    const manifest = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')) as Record<string, unknown>;
    assert.deepEqual(
      ['scripts', 'dependencies', 'devDependencies', 'allowScripts'].filter((key) => key in manifest),
      [],
      'the installed manifest runs nothing and needs nothing',
    );
  });

  test('installing it prints no install-script warning (npm 11 names a package whose scripts it skipped)', () => {
    assert.doesNotMatch(installOutput, /install.scripts|allowScripts|prepare/i, installOutput);
  });

  test('the installed package runs on the Node the image and the executables ship (24): --version and demo', async (t) => {
    const fetched = await run(process.execPath, ['scripts/release/ship-node.mjs', 'x64'], { cwd: repoRoot, timeoutMs: 170_000 });
    assert.equal(fetched.code, 0, fetched.stderr);
    const node24 = fetched.stdout.trim();
    const bin = join(packageDir, 'dist/bundle/porter.js');
    const version = await run(node24, [bin, '--version'], { timeoutMs: 30_000 });
    assert.equal(version.stdout.trim(), (JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { version: string }).version);
    const demo = await run(node24, [bin, 'demo'], { timeoutMs: 120_000 });
    assert.equal(demo.code, 0, demo.stdout + demo.stderr);
    assert.equal((demo.stdout.match(/✔ EXECUTED/g) ?? []).length, 5, demo.stdout);
    t.diagnostic(`on ${(await run(node24, ['--version'])).stdout.trim()}: porter demo delivered 5 of 6 (Notch is never online)`);
  });

  test(
    'the shipped unit verifies against the real install at /usr/local/bin/porter',
    { skip: which('systemd-analyze') ? false : 'systemd-analyze not installed' },
    async () => {
      const result = await run('systemd-analyze', ['verify', `--root=${root}`, 'porter.service'], { timeoutMs: 30_000 });
      assert.equal(`${result.stdout}${result.stderr}`, '');
      assert.equal(result.code, 0);
    },
  );

  test('the installed porter runs: time to first pull, then a clean SIGTERM stop (exit 0)', async (t) => {
    const api = await startSellerApi();
    const rcon = await startRconServer({ password: 'pack-test-password', flavour: 'minecraft' });
    const dir = mkdtempSync(join(tmpdir(), 'porter-pack-run-'));
    try {
      const configPath = join(dir, 'config.json');
      writeFileSync(
        configPath,
        JSON.stringify({
          api: { baseUrl: api.url },
          servers: [{ id: SIM_SERVER_ID, executor: { type: 'rcon', host: rcon.host, port: rcon.port } }],
          poll: { idleMs: 200 },
          stateDir: './state',
          log: { level: 'warn' },
        }),
      );
      const env = { ...process.env, PORTER_API_TOKEN: SIM_TOKEN, PORTER_RCON_PASSWORD: 'pack-test-password' };
      const started = Date.now();
      const child = spawn(porter, ['run', '-c', configPath], { env, stdio: ['ignore', 'pipe', 'pipe'] });
      let output = '';
      child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
      let exitCode: number | null | undefined;
      const exited = new Promise<number | null>((resolve) =>
        child.on('exit', (code) => {
          exitCode = code;
          resolve(code);
        }),
      );
      try {
        const firstPull = await waitFor(
          () => {
            if (exitCode !== undefined) throw new Error(`porter exited with ${exitCode} before its first pull:\n${output}`);
            return api.requests.find((r) => r.route === 'pull');
          },
          { timeoutMs: 30_000, what: 'the first pull' },
        );
        t.diagnostic(`installed porter: first pull ${firstPull.at - started} ms after spawn`);
        assert.ok(firstPull.at - started < 10_000);
      } finally {
        child.kill('SIGTERM');
      }
      assert.equal(await exited, 0, output);
      assert.doesNotMatch(output, new RegExp(`${SIM_TOKEN}|pack-test-password`), 'no secret in the output');
    } finally {
      await api.close();
      await rcon.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
