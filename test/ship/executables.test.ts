import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { waitFor } from '../helpers/wait-for.js';
import { ensureDebianBase } from './node-base.js';
import { engineMissing, podman, removeAll, RUN_FLAGS } from './podman.js';
import { buildRelease } from './packed.js';
import { repoRoot } from './repo.js';
import { missingTool, run } from './run.js';

/**
 * The release as owners consume it (docs/install.md): `npm run release`'s single executables and
 * its SHA256SUMS and SBOM, made from this tree's build. The x64 executable runs the whole
 * rehearsal in a Debian container with no Node at all, as a host without Node runs it; the arm64
 * one runs under qemu-user, as on the small ARM hosts many game servers use.
 */

const VERSION = (JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { version: string }).version;
const WAIT = { timeoutMs: 60_000, intervalMs: 200 };

describe('npm run release: the single executables, SHA256SUMS and the SBOM', { timeout: 1_800_000 }, () => {
  let work = '';
  let out = '';

  before(async () => {
    work = mkdtempSync(join(tmpdir(), 'porter-release-'));
    out = join(work, 'release');
    await buildRelease(out, ['npm', 'sea', 'sums']);
  });

  after(() => {
    if (work) rmSync(work, { recursive: true, force: true });
  });

  test('sha256sum -c SHA256SUMS passes for every file of the release', async () => {
    const checked = await run('sha256sum', ['-c', 'SHA256SUMS'], { cwd: out });
    assert.equal(checked.code, 0, checked.stdout + checked.stderr);
    const names = checked.stdout
      .trim()
      .split('\n')
      .map((line) => line.replace(/: OK$/, ''));
    assert.deepEqual(names.sort(), [
      `porter-${VERSION}-linux-arm64`,
      `porter-${VERSION}-linux-x64`,
      `porter-connector-${VERSION}.cdx.json`,
      `porter-connector-${VERSION}.tgz`,
    ]);
  });

  test('the SBOM (CycloneDX) lists the libraries the bundle carries, and no build tool', () => {
    const sbom = JSON.parse(readFileSync(join(out, `porter-connector-${VERSION}.cdx.json`), 'utf8')) as {
      bomFormat: string;
      metadata: { component: { name: string } };
      components: Array<{ name: string; group?: string; version: string; purl: string }>;
    };
    assert.equal(sbom.bomFormat, 'CycloneDX');
    assert.equal(sbom.metadata.component.name, 'porter-connector');
    const listed = new Set(sbom.components.map((c) => (c.group ? `${c.group}/${c.name}` : c.name)));
    for (const library of ['commander', 'pino', 'pino-pretty', 'undici', 'zod', 'prom-client', '@clack/prompts'])
      assert.ok(listed.has(library), `${library} is listed`);
    for (const tool of ['typescript', 'esbuild', 'eslint', 'fast-check', 'postject']) assert.ok(!listed.has(tool), `${tool} is not`);
  });

  test(
    'the arm64 executable runs --version and demo under qemu-user',
    { skip: missingTool('qemu-aarch64-static', 'apt-get install qemu-user-static libc6-arm64-cross libstdc++6-arm64-cross') },
    async (t) => {
      const binary = join(out, `porter-${VERSION}-linux-arm64`);
      const qemu = ['-L', '/usr/aarch64-linux-gnu', binary];
      const version = await run('qemu-aarch64-static', [...qemu, '--version'], { timeoutMs: 120_000 });
      assert.equal(version.stdout.trim(), VERSION, version.stderr);
      const demo = await run('qemu-aarch64-static', [...qemu, 'demo'], { timeoutMs: 300_000, cwd: work });
      assert.equal(demo.code, 0, demo.stdout + demo.stderr);
      assert.equal((demo.stdout.match(/✔ EXECUTED/g) ?? []).length, 5, demo.stdout);
      t.diagnostic(`arm64 under qemu: demo in ${(demo.ms / 1000).toFixed(1)} s`);
    },
  );

  describe('the x64 executable on a host with no Node (a Debian container)', { skip: engineMissing() }, () => {
    const name = `porter-release-${process.pid}`;
    // Where an owner puts what they downloaded: not on PATH, under its release name.
    const installed = `/opt/porter/porter-${VERSION}-linux-x64`;
    const children: ChildProcess[] = [];
    let shared = '';

    before(async () => {
      const image = await ensureDebianBase('bare');
      shared = mkdtempSync(join(tmpdir(), 'porter-release-run-'));
      chmodSync(shared, 0o755);
      copyFileSync(join(out, `porter-${VERSION}-linux-x64`), join(shared, 'porter'));
      await podman(
        [
          'run',
          '-d',
          '--name',
          name,
          ...RUN_FLAGS,
          '-v',
          `${shared}/porter:${installed}:ro`,
          '-v',
          `${shared}:/rehearsal`,
          image,
          'sleep',
          '900',
        ],
        { timeoutMs: 120_000 },
      );
    });

    after(async () => {
      for (const child of children) child.kill('SIGKILL');
      await removeAll([name]);
      if (shared) rmSync(shared, { recursive: true, force: true });
    });

    const inside = (args: readonly string[], timeoutMs = 60_000) =>
      podman(['exec', '-w', '/rehearsal', name, installed, ...args], { allowFailure: true, timeoutMs });

    /** A long-running porter in the container; its output lines as they come. */
    function started(args: readonly string[]): { lines: string[]; exited: () => boolean } {
      const child = spawn('podman', ['exec', '-w', '/rehearsal', name, installed, ...args], {
        env: { ...process.env, DISABLE_HC_SYSTEMD: 'true' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      children.push(child);
      const lines: string[] = [];
      let exited = false;
      child.on('exit', () => (exited = true));
      let rest = '';
      const take = (chunk: Buffer) => {
        const text = rest + chunk.toString();
        const parts = text.split('\n');
        rest = parts.pop() ?? '';
        lines.push(...parts);
      };
      child.stdout.on('data', take);
      child.stderr.on('data', take);
      return { lines, exited: () => exited };
    }

    test('there is no node in the container', async () => {
      const which = await podman(['exec', name, 'sh', '-c', 'command -v node nodejs || echo none'], { allowFailure: true });
      assert.equal(which.stdout.trim(), 'none');
    });

    test('the rehearsal: porter sim, porter check, porter run, a purchase, porter history', async () => {
      const sim = started(['sim', '--json']);
      const info = await waitFor(
        () => {
          const line = sim.lines.find((l) => l.startsWith('{') && l.includes('storeUrl'));
          if (!line && sim.exited()) assert.fail(`porter sim exited:\n${sim.lines.join('\n')}`);
          return line ? (JSON.parse(line) as Record<string, unknown> & { executor: Record<string, unknown> }) : undefined;
        },
        { ...WAIT, what: "the sim's config line" },
      );
      writeFileSync(join(shared, 'api-token'), String(info.token), { mode: 0o600 });
      writeFileSync(join(shared, 'game-password'), String(info.password), { mode: 0o600 });
      writeFileSync(
        join(shared, 'config.json'),
        JSON.stringify({
          api: { baseUrl: info.storeUrl, tokenFile: './api-token' },
          servers: [
            {
              id: info.serverId,
              name: 'rehearsal',
              executor: { ...info.executor, passwordFile: './game-password' },
              players: { preset: info.preset },
              ...(info.failurePatterns !== undefined && { failurePatterns: info.failurePatterns }),
            },
          ],
          poll: { idleMs: 200 },
          stateDir: './state',
        }),
      );
      const checked = await inside(['check', '-c', 'config.json']);
      assert.equal(checked.code, 0, checked.stdout + checked.stderr);

      const daemon = started(['run', '-c', 'config.json']);
      const bought = await inside(['sim', 'buy', 'give {player} diamond 1', '--player', 'Steve']);
      assert.equal(bought.code, 0, bought.stdout + bought.stderr);
      await waitFor(
        () => {
          if (daemon.exited()) assert.fail(`porter run exited:\n${daemon.lines.join('\n')}`);
          return sim.lines.some((l) => l.includes('"EXECUTED"'));
        },
        { ...WAIT, what: 'the store to see the purchase executed' },
      );
      const history = await inside(['history', '-c', 'config.json']);
      assert.equal(history.code, 0, history.stdout + history.stderr);
      assert.match(history.stdout, /give Steve diamond 1/);
    });

    test('porter init --systemd writes a unit whose ExecStart is the executable itself', async () => {
      // The rehearsal's sim is still running: init proves the token and the login against it.
      const config = JSON.parse(readFileSync(join(shared, 'config.json'), 'utf8')) as {
        api: { baseUrl: string };
        servers: Array<{ id: string; executor: { port: number } }>;
      };
      const initialised = await inside(
        [
          'init',
          '--yes',
          '--systemd',
          '--dir',
          '/rehearsal/etc-porter',
          '--unit-dir',
          '/rehearsal/units',
          '--api-url',
          config.api.baseUrl,
          '--token-file',
          '/rehearsal/api-token',
          '--server-id',
          config.servers[0]!.id,
          '--game',
          'minecraft',
          '--rcon-host',
          '127.0.0.1',
          '--rcon-port',
          String(config.servers[0]!.executor.port),
          '--rcon-password-file',
          '/rehearsal/game-password',
        ],
        120_000,
      );
      assert.equal(initialised.code, 0, initialised.stdout + initialised.stderr);
      const unit = readFileSync(resolve(shared, 'units/porter.service'), 'utf8');
      assert.match(unit, new RegExp(`^ExecStart=${installed.replaceAll('.', '\\.')} run --config /rehearsal/etc-porter/config.json$`, 'm'));
      assert.doesNotMatch(unit, /node_modules/, 'no path of an npm install');
    });
  });
});
