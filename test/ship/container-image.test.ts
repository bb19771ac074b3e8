import assert from 'node:assert/strict';
import { chmodSync, chownSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { freePort } from '../../bench/lib/free-port.js';
import { startRconServer, type FakeRconServer } from '../../src/sim/faults/rcon-server.js';
import { SIM_SERVER_ID, SIM_TOKEN, startSellerApi, type FakeSellerApi } from '../../src/sim/seller-api.js';
import { gate } from '../integration/harness.js';
import { waitFor } from '../helpers/wait-for.js';
import { buildPorterImage, imageLabel, imageSize, type BuiltImage } from './porter-image.js';
import { engineMissing, logLines, logsOf, podman, podmanInBackground, processesOf, removeAll, RUN_FLAGS } from './podman.js';
import { readRepoFile, repoRoot } from './repo.js';
import { healthFlags } from './health-flags.js';
import { projectUrls } from './project-urls.js';

/**
 * The image as an owner runs it (docs/install.md#container): the release's OCI archive (built from
 * this Dockerfile by `npm run release`) loaded into a real container engine (podman with runc), then run as a
 * sidecar the locked-down way the guide and the Compose example give: a read-only root file
 * system, every capability dropped, no new privileges, the image's non-root user, the config
 * mounted read-only, the secrets as files under /run/secrets, the journal on a named volume.
 * Against the Seller API and RCON simulators on 127.0.0.1 (host network): it delivers, its
 * HEALTHCHECK passes and fails with the game server, tini as PID 1 reaps what a delivery script
 * leaves, `podman stop` with a command in hand reports it and exits 0, a second container on the
 * same volume in its own pid and network namespace is refused (78) while the first goes on, and a
 * container killed with a command in hand, removed and created again on the same volume, takes
 * the dead one's lock over once its lease stood still and runs nothing twice.
 */

const skip = engineMissing();
const PASSWORD = 'container-rcon-password-4b8e';
const SCRIPTED_ID = '6f9619ff-8b86-d011-b42d-00c04fc964ff';
const WAIT = { timeoutMs: 60_000, intervalMs: 100 } as const;

/** A delivery script that leaves a process behind when it exits, as restart helpers and notifiers do. */
const SCRIPT = '#!/bin/sh\nsleep 600 </dev/null >/dev/null 2>&1 &\necho "ran: $1"\n';

describe('the image in a container engine (podman)', { skip, timeout: 1_800_000 }, () => {
  let image: BuiltImage;
  let api: FakeSellerApi;
  let rcon: FakeRconServer;
  let dir = '';
  let healthPort = 0;
  const suffix = `${process.pid}-${Date.now()}`;
  const volume = `porter-ship-state-${suffix}`;
  const containers: string[] = [];
  let current = '';

  /** `podman run` of the image the way the guide runs it; returns the container's name. */
  async function start(tag: string): Promise<string> {
    const name = `porter-ship-${tag}-${suffix}`;
    containers.push(name);
    await podman(['run', '-d', ...runArgs(name, RUN_FLAGS)]);
    current = name;
    await waitFor(async () => logLines(await logsOf(name)).some((l) => l.event === 'porter.started'), {
      ...WAIT,
      what: `${name} to start`,
    });
    return name;
  }

  /** The guide's flags, the volume, the config and the secrets, after `podman run [-d]`. */
  function runArgs(name: string, engineFlags: readonly string[]): string[] {
    return [
      '--name',
      name,
      ...engineFlags,
      '--read-only',
      '--tmpfs',
      '/tmp',
      '--cap-drop=ALL',
      '--security-opt=no-new-privileges',
      '-v',
      `${volume}:/var/lib/porter`,
      '-v',
      `${join(dir, 'config.json')}:/etc/porter/config.json:ro`,
      '-v',
      `${join(dir, 'porter_api_token')}:/run/secrets/porter_api_token:ro`,
      '-v',
      `${join(dir, 'rcon_password')}:/run/secrets/rcon_password:ro`,
      '-v',
      `${join(dir, 'deliver.sh')}:/etc/porter/deliver.sh:ro`,
      '-e',
      `PORTER_HEALTH_PORT=${healthPort}`,
      // The OCI archive carries no HEALTHCHECK (the format has none): the guide's run line adds it.
      ...healthFlags(),
      image.name,
    ];
  }

  const delivered = (id: string) =>
    waitFor(() => api.commands().find((c) => c.id === id && (c.status === 'EXECUTED' || c.status === 'FAILED')), {
      ...WAIT,
      what: `command ${id} to settle`,
    });

  before(
    async () => {
      image = await buildPorterImage();
      api = await startSellerApi({ servers: [SIM_SERVER_ID, SCRIPTED_ID] });
      rcon = await startRconServer({ password: PASSWORD, flavour: 'minecraft', players: ['Steve'] });
      healthPort = await freePort();
      dir = mkdtempSync(join(tmpdir(), 'porter-container-'));
      const config = {
        api: { baseUrl: api.url, tokenFile: '/run/secrets/porter_api_token', timeoutMs: 30_000 },
        servers: [
          {
            id: SIM_SERVER_ID,
            name: 'survival',
            executor: { type: 'rcon', host: rcon.host, port: rcon.port, passwordFile: '/run/secrets/rcon_password', timeoutMs: 30_000 },
            players: { preset: 'minecraft', refreshMs: 200 },
          },
          { id: SCRIPTED_ID, name: 'scripted', executor: { type: 'script', exec: ['/etc/porter/deliver.sh'], timeoutMs: 30_000 } },
        ],
        poll: { idleMs: 200 },
        stateDir: '/var/lib/porter',
        health: { listen: `127.0.0.1:${healthPort}` },
        log: { level: 'info' },
      };
      writeFileSync(join(dir, 'config.json'), JSON.stringify(config, null, 2), { mode: 0o644 });
      // As docs/install.md says: secret files readable by the image's user (uid 1000) only.
      for (const [file, secret] of [
        ['porter_api_token', SIM_TOKEN],
        ['rcon_password', PASSWORD],
      ] as const) {
        writeFileSync(join(dir, file), `${secret}\n`, { mode: 0o400 });
        chownSync(join(dir, file), 1000, 1000);
      }
      writeFileSync(join(dir, 'deliver.sh'), SCRIPT);
      chmodSync(join(dir, 'deliver.sh'), 0o755);
      await podman(['volume', 'create', volume]);
    },
    { timeout: 1_500_000 },
  );

  after(async () => {
    await removeAll(containers, [volume]);
    await Promise.all([api?.close(), rcon?.close()]);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test("the release's OCI archive: loaded under the release's image name, the Node the executables ship, its OCI labels and its size", async (t) => {
    const size = await imageSize(image.name);
    t.diagnostic(
      `release OCI step: ${(image.buildMs / 1000).toFixed(1)} s (layer cache as found); archive ${(image.archiveBytes / 1e6).toFixed(1)} MB, image ${(size / 1e6).toFixed(1)} MB`,
    );
    const pkg = JSON.parse(readRepoFile('package.json')) as { version: string; license: string };
    const urls = await projectUrls();
    assert.equal(image.loadedAs, urls.image);
    assert.equal(await imageLabel(image.name, 'org.opencontainers.image.version'), pkg.version);
    assert.equal(await imageLabel(image.name, 'org.opencontainers.image.licenses'), pkg.license);
    assert.equal(await imageLabel(image.name, 'org.opencontainers.image.source'), urls.repository);
    assert.match(await imageLabel(image.name, 'org.opencontainers.image.revision'), /^[0-9a-f]{40}$/);
    const shipNode = pathToFileURL(join(repoRoot, 'scripts/release/ship-node.mjs')).href;
    const { SHIP_NODE } = (await import(shipNode)) as { SHIP_NODE: string };
    const node = await podman(['run', '--rm', ...RUN_FLAGS, '--entrypoint', 'node', image.name, '--version']);
    assert.equal(node.stdout.trim(), `v${SHIP_NODE}`, 'the image runs the Node the single executables ship');
    // The build's npm settings were a secret: no npmrc in the image.
    const npmrc = await podman(['run', '--rm', ...RUN_FLAGS, '--user', 'root', '--entrypoint', 'ls', image.name, '-A', '/root'], {
      allowFailure: true,
    });
    assert.doesNotMatch(npmrc.stdout, /\.npmrc/);
  });

  test('runs locked down and delivers over RCON; no secret in its output', async () => {
    const name = await start('first');
    const inspect = JSON.parse((await podman(['inspect', name])).stdout) as Array<{
      State: { Pid: number };
      HostConfig: { ReadonlyRootfs: boolean };
    }>;
    assert.equal(inspect[0]!.HostConfig.ReadonlyRootfs, true);
    // tini's child: Node 24 names its main thread MainThread, which is what comm shows.
    const porter = (await processesOf(name)).find((p) => p.ppid === 1 && p.pid !== 1)!;
    assert.ok(porter, 'porter runs');
    const status = readFileSync(`/proc/${porter.hpid}/status`, 'utf8');
    assert.match(status, /^Uid:\s+1000\s/m, "the image's node user");
    assert.match(status, /^CapEff:\s+0+$/m, 'no capability');
    assert.match(status, /^NoNewPrivs:\s+1$/m);
    const root = readFileSync(`/proc/${porter.hpid}/mountinfo`, 'utf8')
      .split('\n')
      .find((line) => line.split(' ')[4] === '/');
    assert.match(root ?? '', /\sro[,\s]/, 'the root file system is read-only');

    const id = api.enqueue(SIM_SERVER_ID, { command: 'give Steve diamond 1' });
    assert.equal((await delivered(id)).status, 'EXECUTED');
    assert.equal(rcon.executed.filter((e) => e.command === 'give Steve diamond 1').length, 1);
    // The store saw the report before podman's log has the line that follows it: wait for the line.
    const logs = await waitFor(
      async () => {
        const text = await logsOf(name);
        return logLines(text).some((l) => l.event === 'delivery.done') && text;
      },
      { ...WAIT, what: 'the delivered line in the container log' },
    );
    for (const secret of [SIM_TOKEN, PASSWORD]) assert.ok(!logs.includes(secret), 'no secret in the logs');
  });

  test('a second container on the same volume, in its own pid and network namespace: exit 78 naming the first, which goes on', async () => {
    // --network none: its own network namespace, so the kernel lock (an abstract socket) does not
    // reach it, and its own pid namespace, where the first's pid names nothing. It is refused by the
    // first's lease before it uses the network at all.
    const isolated = RUN_FLAGS.map((flag, i) => (RUN_FLAGS[i - 1] === '--network' ? 'none' : flag));
    const name = `porter-ship-isolated-${suffix}`;
    containers.push(name);
    const first = current;
    const firstId = (await podman(['inspect', '--format', '{{.Config.Hostname}}', first])).stdout.trim();
    const refused = await podman(['run', ...runArgs(name, isolated)], { allowFailure: true, timeoutMs: 120_000 });
    const output = refused.stdout + refused.stderr;
    assert.equal(refused.code, 78, output);
    assert.match(
      output,
      new RegExp(
        `porter: E_CONFIG: state directory /var/lib/porter is in use by another porter process \\(pid \\d+, on host ${firstId}, in pid namespace pid:\\[\\d+\\], lease \\d+ refreshed at \\S+ by its clock\\): stop it, or give this instance its own stateDir\\. It runs where this porter cannot see it \\(it runs in another pid namespace`,
      ),
    );
    assert.ok(!logLines(output).some((l) => l.event === 'state.lock.takeover'), output);
    const id = api.enqueue(SIM_SERVER_ID, { command: 'give Steve emerald 1' });
    assert.equal((await delivered(id)).status, 'EXECUTED');
    assert.ok(!logLines(await logsOf(first)).some((l) => l.event === 'state.lock.lost'), 'the first keeps its lock');
  });

  test('podman healthcheck run: healthy while the game server answers, unhealthy while it is down', async () => {
    const healthy = await podman(['healthcheck', 'run', current], { allowFailure: true });
    assert.equal(healthy.code, 0, healthy.stdout + healthy.stderr);
    await rcon.down();
    try {
      await waitFor(async () => (await podman(['healthcheck', 'run', current], { allowFailure: true })).code !== 0, {
        ...WAIT,
        what: 'the health check to fail while the game server is down',
      });
    } finally {
      await rcon.up();
    }
    await waitFor(async () => (await podman(['healthcheck', 'run', current], { allowFailure: true })).code === 0, {
      ...WAIT,
      what: 'the health check to pass again',
    });
  });

  test('tini as PID 1 reaps what a delivery script leaves behind', async () => {
    const id = api.enqueue(SCRIPTED_ID, { command: 'vip Steve' });
    assert.equal((await delivered(id)).status, 'EXECUTED');
    const processes = await processesOf(current);
    assert.equal(processes.find((p) => p.pid === 1)?.comm, 'tini');
    const orphan = await waitFor(async () => (await processesOf(current)).find((p) => p.comm === 'sleep'), {
      ...WAIT,
      what: "the script's leftover sleep",
    });
    assert.equal(orphan.ppid, 1, 'the leftover was handed to PID 1 when the script exited');
    process.kill(orphan.hpid, 'SIGKILL');
    // Unreaped, it would stay a zombie (state Z) for as long as the container runs.
    await waitFor(async () => !(await processesOf(current)).some((p) => p.pid === orphan.pid), {
      ...WAIT,
      what: 'PID 1 to reap the leftover',
    });
  });

  test('podman stop with a command in hand: it is finished and reported, and the container exits 0', async () => {
    const slow = 'say held-for-stop';
    const answer = gate();
    rcon.setHandler((command) => (command === slow ? { text: '', after: answer.promise } : undefined));
    const id = api.enqueue(SIM_SERVER_ID, { command: slow });
    await waitFor(() => rcon.executed.some((e) => e.command === slow), { ...WAIT, what: 'the command to reach the game server' });
    const stopping = podmanInBackground(['stop', '-t', '30', current]);
    await waitFor(async () => logLines(await logsOf(current)).some((l) => l.event === 'porter.stopping'), {
      ...WAIT,
      what: 'porter to take the stop signal',
    });
    answer.open();
    assert.equal(await stopping, 0);
    rcon.setHandler(undefined);
    const state = JSON.parse((await podman(['inspect', current])).stdout) as Array<{ State: { ExitCode: number; Running: boolean } }>;
    assert.deepEqual({ running: state[0]!.State.Running, exit: state[0]!.State.ExitCode }, { running: false, exit: 0 });
    const command = api.commands().find((c) => c.id === id)!;
    assert.equal(command.status, 'EXECUTED');
    assert.equal(command.reports.filter((r) => r.status === 200).length, 1);
  });

  test('killed with a command in hand, removed and created again on the same volume: it runs nothing twice', async () => {
    await podman(['rm', current]);
    const name = await start('second');
    const held = 'give Steve netherite_ingot 1';
    const answer = gate();
    rcon.setHandler((command) => (command === held ? { text: '', after: answer.promise } : undefined));
    const id = api.enqueue(SIM_SERVER_ID, { command: held });
    await waitFor(() => rcon.executed.some((e) => e.command === held), { ...WAIT, what: 'the command to reach the game server' });
    await podman(['kill', '-s', 'KILL', name]);
    await podman(['rm', name]);
    rcon.setHandler(undefined);
    answer.open();

    const third = await start('third');
    // Another container: the dead one's lock is taken over, by its lease (15 s of no change) or, when the
    // kernel gave the new pid namespace the dead one's number (it reuses a namespace's once all its processes are gone), by its pid.
    const takeover = logLines(await logsOf(third)).find((l) => l.event === 'state.lock.takeover');
    assert.match(
      String(takeover?.reason),
      /did not change for 15 s of watching: it runs in another pid namespace|now belongs to another process|no longer exists/,
    );
    // The journal on the volume says the command was sent with its outcome unknown: reported failed, never sent again.
    const settled = await delivered(id);
    assert.equal(settled.status, 'FAILED', JSON.stringify(settled));
    const next = api.enqueue(SIM_SERVER_ID, { command: 'give Steve apple 1' });
    assert.equal((await delivered(next)).status, 'EXECUTED');
    assert.equal(rcon.executed.filter((e) => e.command === held).length, 1, 'the held command ran once');
  });
});
