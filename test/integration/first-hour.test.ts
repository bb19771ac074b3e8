import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { startRconServer } from '../../src/sim/rcon-server.js';
import { startTelnetServer } from '../../src/sim/telnet-server.js';
import { waitFor } from '../helpers/wait-for.js';
import { CLI, RCON_PASSWORD, SIM_SERVER_ID, SIM_TOKEN, startBed, WAIT, type PorterConfig, type TestBed } from './harness.js';

/**
 * An owner's first hour, as they meet it through the real CLI: `porter check` and `porter rcon`
 * print their own lines and no daemon log line between them, a rejected password names where the
 * configured game keeps it, a flag value porter cannot use is exit 64 whichever command takes it,
 * and players are counted as players.
 */

interface Ran {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

async function porter(bed: TestBed, ...args: string[]): Promise<Ran> {
  const process = bed.spawnPorter({ args });
  const exit = await process.waitExit();
  return { code: exit.code, stdout: process.stdout, stderr: process.stderr };
}

/** A pino line, JSON or pretty (`[21:38:03.119] ERROR: …`): what the daemon writes, never a one-shot command. */
const LOG_LINE = /^\{"level"|^\[\d\d:\d\d:\d\d(\.\d+)?\] [A-Z]+:/m;

function wrongPassword(config: PorterConfig): void {
  config.servers[0]!.executor.password = 'not-the-password-71';
}

describe("an owner's first hour: messages that fit where they appear", () => {
  test('porter check with a wrong RCON password: its own ✔/✖ lines only, exit 78', async () => {
    const bed = await startBed();
    try {
      bed.writeConfig(wrongPassword);
      const check = await porter(bed, 'check', '-c', bed.configPath);
      assert.equal(check.code, 78, check.stdout + check.stderr);
      assert.match(check.stdout, /✖ server itest: the RCON password was rejected/);
      assert.doesNotMatch(check.stdout + check.stderr, LOG_LINE);
      for (const line of check.stdout.trimEnd().split('\n').slice(1)) assert.match(line, /^[✔✖!] /, `a line of its own: ${line}`);
      assert.equal(check.stderr, '');
    } finally {
      await bed.close();
    }
  });

  test('porter rcon with a wrong RCON password: one line saying what to fix, exit 78', async () => {
    const bed = await startBed();
    try {
      bed.writeConfig(wrongPassword);
      const rcon = await porter(bed, 'rcon', '-c', bed.configPath, 'list');
      assert.equal(rcon.code, 78, rcon.stderr);
      assert.equal(rcon.stdout, '');
      assert.doesNotMatch(rcon.stderr, LOG_LINE);
      assert.equal(rcon.stderr.trimEnd().split('\n').length, 1, rcon.stderr);
      assert.match(rcon.stderr, /^porter: E_CREDENTIALS: the RCON password was rejected by /);
    } finally {
      await bed.close();
    }
  });

  test("a config others can read: porter rcon's warning is a line of its own, not a log line", async () => {
    const bed = await startBed();
    try {
      bed.writeConfig();
      const { chmodSync } = await import('node:fs');
      chmodSync(bed.configPath, 0o644);
      const rcon = await porter(bed, 'rcon', '-c', bed.configPath, 'list');
      assert.equal(rcon.code, 0, rcon.stderr);
      assert.match(rcon.stdout, /Steve/);
      assert.doesNotMatch(rcon.stderr, LOG_LINE);
      assert.match(rcon.stderr, /^porter: warning: .* other users can read it/);
    } finally {
      await bed.close();
    }
  });

  for (const game of [
    { preset: 'palworld', flavour: 'id0', says: /AdminPassword in PalWorldSettings\.ini/ },
    { preset: 'conan', flavour: 'source', says: /RconPassword in .*Game\.ini/ },
    { preset: 'minecraft', flavour: 'minecraft', says: /rcon\.password in server\.properties/ },
  ] as const) {
    test(`a wrong password on ${game.preset}: the hint names ${game.preset}'s own setting`, async () => {
      const bed = await startBed();
      const server = await startRconServer({ password: RCON_PASSWORD, flavour: game.flavour });
      try {
        bed.writeConfig((config) => {
          const entry = config.servers[0]!;
          entry.executor = { ...entry.executor, port: server.port, flavour: game.flavour, password: 'not-the-password-71' };
          entry.players = { preset: game.preset };
        });
        const check = await porter(bed, 'check', '-c', bed.configPath);
        assert.equal(check.code, 78, check.stdout + check.stderr);
        const line = check.stdout.split('\n').find((l) => l.startsWith('✖ server')) ?? '';
        assert.match(line, game.says);
        if (game.preset !== 'minecraft') assert.doesNotMatch(line, /Minecraft|server\.properties/);
        const rcon = await porter(bed, 'rcon', '-c', bed.configPath, 'list');
        assert.equal(rcon.code, 78);
        assert.match(rcon.stderr, game.says);
      } finally {
        await bed.close();
        await server.close();
      }
    });
  }

  test('a --server porter cannot use is exit 64 in rcon and players alike, naming the ones there are', async () => {
    const bed = await startBed();
    try {
      bed.writeConfig((config) => {
        config.servers.push({ ...config.servers[0]!, id: 'c0ffee00-0000-4000-8000-000000000002', name: 'second' });
      });
      for (const command of [
        ['rcon', '--server', 'nope', 'list'],
        ['players', '--server', 'nope'],
      ]) {
        const ran = await porter(bed, command[0]!, '-c', bed.configPath, ...command.slice(1));
        assert.equal(ran.code, 64, `${command.join(' ')}: ${ran.stderr}`);
        assert.match(ran.stderr, /no server "nope" in the config: use one of itest, second/);
      }
      for (const command of [['rcon', 'list'], ['players']]) {
        const ran = await porter(bed, command[0]!, '-c', bed.configPath, ...command.slice(1));
        assert.equal(ran.code, 64, `${command.join(' ')} without --server: ${ran.stderr}`);
        assert.match(ran.stderr, /choose one with --server/);
      }
      const fine = await porter(bed, 'rcon', '-c', bed.configPath, '--server', 'second', 'list');
      assert.equal(fine.code, 0, fine.stderr);
      // A server with no console is one porter rcon cannot use either.
      bed.writeConfig((config) => {
        config.servers.push({
          ...config.servers[0]!,
          id: 'c0ffee00-0000-4000-8000-000000000002',
          name: 'second',
          executor: { type: 'script', exec: [process.execPath, '-e', '0'] },
          players: { preset: 'none' },
        });
      });
      const script = await porter(bed, 'rcon', '-c', bed.configPath, '--server', 'second', 'list');
      assert.equal(script.code, 64, script.stderr);
      assert.match(script.stderr, /server second uses a script executor, which has no console: .*use --server with one of itest/);
    } finally {
      await bed.close();
    }
  });

  test('7 Days to Die: one player with three identifiers is one player online', async () => {
    const bed = await startBed();
    const game = await startTelnetServer({
      password: RCON_PASSWORD,
      players: [{ name: 'alice', platformId: 'Steam_76561198000000171', crossId: 'EOS_000000000000000000000000000000ab' }],
    });
    try {
      bed.writeConfig((config) => {
        const server = config.servers[0]!;
        server.executor = { type: 'telnet', host: game.host, port: game.port, password: RCON_PASSWORD, timeoutMs: 30_000 };
        server.players = { preset: '7dtd' };
      });
      const check = await porter(bed, 'check', '-c', bed.configPath);
      assert.equal(check.code, 0, check.stdout + check.stderr);
      assert.match(check.stdout, /1 player online \(3 identifiers\): alice, 76561198000000171, eos_0+ab\n/);
    } finally {
      await bed.close();
      await game.close();
    }
  });

  test('porter init in a clone: its Next lines are commands that work there (npx porter, or node and the path run), and the config serves /metrics with porter_build_info', async () => {
    const bed = await startBed();
    const game = await startRconServer({ password: 'mcFixtureRcon25575', flavour: 'minecraft', players: ['Steve'] });
    const root = join(import.meta.dirname, '../../..');
    const fixture = join(root, 'test/fixtures/game-dirs/minecraft');
    const tokenFile = join(bed.dir, 'token.txt');
    writeFileSync(tokenFile, `${SIM_TOKEN}\n`);
    const env: NodeJS.ProcessEnv = {};
    for (const [key, value] of Object.entries(process.env)) if (!key.startsWith('PORTER_') && !key.startsWith('npm_')) env[key] = value;
    // npx runs the clone's own package by installing its folder, and that runs its `prepare`
    // (npm run build) in place: it would delete and rebuild dist/ under every other test running.
    // The clone here is built already, as after `npm ci`.
    env.npm_config_ignore_scripts = 'true';
    // No `porter` on this PATH: a clone after `npm ci`, not a global install.
    env.PATH = (env.PATH ?? '')
      .split(':')
      .filter((dir) => !dir.includes('node_modules'))
      .join(':');
    const exec = (file: string, args: readonly string[]) =>
      new Promise<{ code: number; stdout: string; stderr: string }>((resolve) =>
        execFile(file, args, { cwd: root, env, timeout: 120_000 }, (error, stdout, stderr) =>
          resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
        ),
      );
    const init = (dir: string) => [
      'init',
      '--api-url',
      bed.api.url,
      '--token-file',
      tokenFile,
      '--game-dir',
      fixture,
      '--rcon-port',
      String(game.port),
      '--server-id',
      SIM_SERVER_ID,
      '--yes',
      '--dir',
      join(bed.dir, dir),
    ];
    try {
      for (const [how, file, args] of [
        ['npx porter', 'npx', ['porter', ...init('by-npx')]],
        ['node', process.execPath, [CLI, ...init('by-node')]],
      ] as const) {
        const result = await exec(file, args);
        assert.equal(result.code, 0, result.stdout + result.stderr);
        const next = result.stdout
          .split('\n')
          .map((line) => line.replace(/^[│\s]+/, ''))
          .filter((line) => / check -c /.test(line));
        assert.equal(next.length, 1, result.stdout);
        assert.ok(next[0]!.startsWith(`${how} `), `${how}: ${next[0]}`);
        // The line as the owner would paste it (paths here hold no spaces).
        const [command, ...words] = next[0]!.trim().split(' ');
        const check = await exec(command === 'node' ? process.execPath : command!, words);
        assert.equal(check.code, 0, `${next[0]}:\n${check.stdout}${check.stderr}`);
      }

      // README's step 3, run where init was run without --dir: the path it names is the one init wrote.
      const fresh = join(bed.dir, 'fresh');
      mkdirSync(fresh);
      const readme = readFileSync(join(root, 'README.md'), 'utf8');
      const step3 = /^3\. `porter check -c ([^`]+)`/m.exec(readme);
      assert.ok(step3, "README's step 3 is a porter check command");
      const bare = init('unused').slice(0, -2);
      const made = await new Promise<number>((resolve) =>
        execFile(process.execPath, [CLI, ...bare], { cwd: fresh, env, timeout: 120_000 }, (error) => resolve(error ? 1 : 0)),
      );
      assert.equal(made, 0);
      const stepped = await new Promise<{ code: number; output: string }>((resolve) =>
        execFile(process.execPath, [CLI, 'check', '-c', step3[1]!], { cwd: fresh, env, timeout: 120_000 }, (error, stdout, stderr) =>
          resolve({ code: error ? 1 : 0, output: stdout + stderr }),
        ),
      );
      assert.equal(stepped.code, 0, stepped.output);

      const configPath = join(bed.dir, 'by-node', 'config.json');
      const config = JSON.parse(readFileSync(configPath, 'utf8')) as { health?: { listen?: string } };
      assert.equal(config.health?.listen, '127.0.0.1:9464');
      const dockerfile = readFileSync(join(root, 'Dockerfile'), 'utf8');
      assert.match(dockerfile, /^ENV PORTER_HEALTH_PORT=9464$/m, "the container's HEALTHCHECK asks the port init writes");

      // 9464 may be held by a test beside this one: the same config on a port the system picks.
      const port = await new Promise<number>((resolve) => {
        const probe = createServer().listen(0, '127.0.0.1', () => {
          const { port: free } = probe.address() as { port: number };
          probe.close(() => resolve(free));
        });
      });
      writeFileSync(configPath, JSON.stringify({ ...config, health: { listen: `127.0.0.1:${port}` } }), { mode: 0o600 });
      const run = bed.spawnPorter({ args: ['run', '-c', configPath] });
      const metrics = await waitFor(
        async () => {
          if (run.exit) throw new Error(`porter exited: ${run.tail()}`);
          return fetch(`http://127.0.0.1:${port}/metrics`).then(
            (response) => response.text(),
            () => undefined,
          );
        },
        { ...WAIT, what: '/metrics' },
      );
      const version = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version;
      assert.match(
        metrics,
        new RegExp(`^porter_build_info\\{version="${version.replace(/\./g, '\\.')}",node="${process.version}"\\} 1$`, 'm'),
      );
      assert.match(metrics, /^# TYPE porter_build_info gauge$/m);
    } finally {
      await bed.close();
      await game.close();
    }
  });
});
