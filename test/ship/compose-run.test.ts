import assert from 'node:assert/strict';
import { chownSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { freePort } from '../../bench/lib/free-port.js';
import { startRconServer, type FakeRconServer } from '../../src/sim/rcon-server.js';
import { SIM_SERVER_ID, SIM_TOKEN, startSellerApi, type FakeSellerApi } from '../../src/sim/seller-api.js';
import { waitFor } from '../helpers/wait-for.js';
import { buildPorterImage, type BuiltImage } from './porter-image.js';
import { engineMissing, logLines, logsOf, podman, removeAll, RUN_FLAGS } from './podman.js';
import { readRepoFile } from './repo.js';
import { loadYaml, yamlMissing } from './yaml.js';

/**
 * docker-compose.example.yml run as docs/install.md says, its services one by one from the parsed
 * file: no compose runner here can reach the simulators on the host's loopback (a compose network
 * cannot, and podman has only the host network on these machines). The porter service becomes the
 * `podman run` its keys say; every key of the service is translated or the test fails, so a key
 * added to the example cannot go untried. The mc service is porter's RCON simulator, reached as
 * `mc` as on the compose network, with the same password file; the store is the Seller API simulator.
 */

const skip = engineMissing() || (await yamlMissing());
const WAIT = { timeoutMs: 60_000, intervalMs: 100 } as const;

interface Service {
  build?: string;
  image?: string;
  depends_on?: Record<string, { condition?: string }>;
  healthcheck?: unknown;
  volumes?: string[];
  secrets?: string[];
  stop_grace_period?: string;
  read_only?: boolean;
  tmpfs?: string[];
  cap_drop?: string[];
  security_opt?: string[];
  restart?: string;
}
interface Compose {
  name: string;
  services: Record<string, Service>;
  secrets: Record<string, { file: string }>;
  volumes: Record<string, unknown>;
}

/** The `podman run` flags a compose service's keys ask for; `mc` is the host the service reaches the game on. */
function runFlags(compose: Compose, service: Service, project: string): { flags: string[]; volumes: string[]; stopSeconds: number } {
  const flags: string[] = [];
  const volumes: string[] = [];
  let stopSeconds = 10;
  for (const [key, value] of Object.entries(service)) {
    switch (key) {
      case 'image':
      case 'depends_on':
        break; // the image is the release's archive, loaded below; mc (the simulator) runs before porter
      case 'healthcheck': {
        const check = value as { test: string[]; interval: string; timeout: string; start_period: string; retries: number };
        if (check.test[0] !== 'CMD') throw new Error(`healthcheck.test ${JSON.stringify(check.test)} is not ["CMD", ...]`);
        flags.push('--health-cmd', JSON.stringify(check.test.slice(1)), '--health-interval', check.interval);
        flags.push(
          '--health-timeout',
          check.timeout,
          '--health-start-period',
          check.start_period,
          '--health-retries',
          String(check.retries),
        );
        break;
      }
      case 'volumes':
        for (const spec of value as string[]) {
          const [source, target, mode] = spec.split(':') as [string, string, string | undefined];
          const named = source in compose.volumes;
          if (named) volumes.push(`${compose.name}_${source}`);
          const from = named ? `${compose.name}_${source}` : resolve(project, source);
          flags.push('-v', `${from}:${target}${mode ? `:${mode}` : ''}`);
        }
        break;
      case 'secrets':
        for (const name of value as string[]) flags.push('-v', `${resolve(project, compose.secrets[name]!.file)}:/run/secrets/${name}:ro`);
        break;
      case 'stop_grace_period':
        stopSeconds = Number(/^(\d+)s$/.exec(value as string)?.[1]);
        break;
      case 'read_only':
        if (value === true) flags.push('--read-only');
        break;
      case 'tmpfs':
        for (const path of value as string[]) flags.push('--tmpfs', path);
        break;
      case 'cap_drop':
        for (const cap of value as string[]) flags.push(`--cap-drop=${cap}`);
        break;
      case 'security_opt':
        for (const option of value as string[]) flags.push('--security-opt', option.replace(/:true$/, ''));
        break;
      case 'restart':
        flags.push('--restart', value as string);
        break;
      default:
        throw new Error(`docker-compose.example.yml: the porter service's "${key}" has no translation here; add one`);
    }
  }
  return { flags, volumes, stopSeconds };
}

describe('docker-compose.example.yml, run', { skip, timeout: 1_800_000 }, () => {
  let image: BuiltImage;
  let api: FakeSellerApi;
  let mc: FakeRconServer;
  let project = '';
  let compose: Compose;
  const suffix = `${process.pid}-${Date.now()}`;
  const name = `porter-compose-${suffix}`;
  let stateVolumes: string[] = [];
  const password = `compose-rcon-${suffix}`;

  before(
    async () => {
      compose = (await loadYaml(readRepoFile('docker-compose.example.yml'))) as Compose;
      compose.name = `${compose.name}-${suffix}`;
      image = await buildPorterImage();
      api = await startSellerApi();
      // The guide's steps: mkdir -p porter secrets; copy the example config; the two secrets, owned by uid 1000.
      project = mkdtempSync(join(tmpdir(), 'porter-compose-'));
      mkdirSync(join(project, 'porter'));
      mkdirSync(join(project, 'secrets'));
      for (const [file, secret] of [
        ['porter_api_token', SIM_TOKEN],
        ['rcon_password', password],
      ] as const) {
        writeFileSync(join(project, 'secrets', file), `${secret}\n`, { mode: 0o600 });
        chownSync(join(project, 'secrets', file), 1000, 1000);
      }
      mc = await startRconServer({ password: readFileSync(join(project, 'secrets/rcon_password'), 'utf8').trim(), players: ['Steve'] });
      const config = JSON.parse(readRepoFile('docs/examples/config.compose.json')) as {
        api: { baseUrl: string };
        servers: Array<{ id: string; executor: { port: number } }>;
        health: { listen: string };
      };
      // What the guide says to set (the store and the server id), and what this machine needs: the
      // simulator's port for mc's 25575, and a free health port (the host network is shared).
      config.api.baseUrl = api.url;
      config.servers[0]!.id = SIM_SERVER_ID;
      config.servers[0]!.executor.port = mc.port;
      const healthPort = await freePort();
      config.health.listen = `0.0.0.0:${healthPort}`;
      writeFileSync(join(project, 'porter/config.json'), JSON.stringify(config, null, 2));

      const porter = runFlags(compose, compose.services.porter!, project);
      stateVolumes = porter.volumes;
      await podman([
        'run',
        '-d',
        '--name',
        name,
        ...RUN_FLAGS,
        '--add-host',
        `mc:${mc.host}`,
        '-e',
        `PORTER_HEALTH_PORT=${healthPort}`,
        ...porter.flags,
        compose.services.porter!.image!,
      ]);
    },
    { timeout: 1_500_000 },
  );

  after(async () => {
    await removeAll([name], stateVolumes);
    await Promise.all([api?.close(), mc?.close()]);
    if (project) rmSync(project, { recursive: true, force: true });
  });

  test("the porter service runs the image the release's archive loads as, and depends on mc being healthy", () => {
    const porter = compose.services.porter!;
    assert.equal(porter.image, image.loadedAs);
    assert.equal(porter.depends_on?.mc?.condition, 'service_healthy');
  });

  test('its porter service delivers to mc, passes its health check and stops cleanly', async () => {
    const id = api.enqueue(SIM_SERVER_ID, { command: 'give Steve diamond 1' });
    await waitFor(() => api.commands().find((c) => c.id === id && c.status === 'EXECUTED'), { ...WAIT, what: 'the delivery' });
    assert.equal(mc.executed.filter((e) => e.command === 'give Steve diamond 1').length, 1);
    const health = await podman(['healthcheck', 'run', name], { allowFailure: true });
    assert.equal(health.code, 0, health.stdout + health.stderr);

    const stopSeconds = runFlags(compose, compose.services.porter!, project).stopSeconds;
    assert.ok(stopSeconds >= 15, 'stop_grace_period leaves room for the drain');
    await podman(['stop', '-t', String(stopSeconds), name], { timeoutMs: (stopSeconds + 30) * 1000 });
    const state = JSON.parse((await podman(['inspect', name])).stdout) as Array<{ State: { ExitCode: number } }>;
    assert.equal(state[0]!.State.ExitCode, 0);
    // podman's log may trail the exit: wait for porter's last line rather than read it once.
    const logs = await waitFor(
      async () => {
        const text = await logsOf(name);
        return logLines(text).some((l) => l.event === 'porter.stopped') && text;
      },
      { ...WAIT, what: "porter's stop line in the container log" },
    );
    for (const secret of [SIM_TOKEN, password]) assert.ok(!logs.includes(secret), 'no secret in the logs');
  });
});
