import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { parseConfig } from '../../src/config/load.js';
import { configSchema } from '../../src/config/schema.js';
import { parseListen } from '../../src/health/listen.js';
import { parseDockerfile } from './dockerfile.js';
import { healthFlags } from './health-flags.js';
import { projectUrls } from './project-urls.js';
import { readRepoFile, repoPath } from './repo.js';
import { loadYaml, yamlMissing } from './yaml.js';

/**
 * docker-compose.example.yml read against what itzg/minecraft-server documents (EULA, ENABLE_RCON,
 * RCON_PORT, RCON_PASSWORD / RCON_PASSWORD_FILE) and against porter's own image and config: the
 * config it mounts must load, reach the mc service on its RCON port, keep state on the volume
 * and read the secrets compose hands over. YAML is read with Debian's python3-yaml (no YAML
 * parser among porter's dependencies).
 */

const skip = await yamlMissing();

type Service = {
  image?: string;
  build?: string | { context: string };
  healthcheck?: unknown;
  environment?: Record<string, string | number> | string[];
  secrets?: (string | { source: string; target?: string })[];
  ports?: string[];
  volumes?: string[];
  depends_on?: Record<string, { condition?: string }>;
  stop_grace_period?: string;
  read_only?: boolean;
  cap_drop?: string[];
};
type Compose = { services: Record<string, Service>; secrets?: Record<string, { file?: string }>; volumes?: Record<string, unknown> };

function env(service: Service): Record<string, string> {
  const raw = service.environment ?? {};
  if (Array.isArray(raw)) return Object.fromEntries(raw.map((line) => [line.split('=')[0]!, line.slice(line.indexOf('=') + 1)]));
  return Object.fromEntries(Object.entries(raw).map(([k, v]) => [k, String(v)]));
}

function secretPaths(service: Service): string[] {
  return (service.secrets ?? []).map((s) => (typeof s === 'string' ? `/run/secrets/${s}` : (s.target ?? `/run/secrets/${s.source}`)));
}

function seconds(span: string | undefined): number {
  const match = /^(\d+)(s|m)$/.exec(span ?? '');
  assert.ok(match, `unreadable duration ${span}`);
  return Number(match[1]) * (match[2] === 'm' ? 60 : 1);
}

describe('docker-compose.example.yml', { skip }, () => {
  test('runs itzg/minecraft-server with RCON enabled the way its documentation says', async () => {
    const compose = (await loadYaml(readRepoFile('docker-compose.example.yml'))) as Compose;
    const mc = compose.services.mc!;
    assert.match(mc.image ?? '', /^itzg\/minecraft-server(:|$)/);
    const vars = env(mc);
    assert.equal(vars.EULA, 'TRUE');
    assert.equal(vars.ENABLE_RCON, 'true');
    assert.equal(vars.RCON_PORT, '25575');
    assert.ok(vars.RCON_PASSWORD !== undefined || vars.RCON_PASSWORD_FILE !== undefined, 'an RCON password is set');
    if (vars.RCON_PASSWORD_FILE) assert.ok(secretPaths(mc).includes(vars.RCON_PASSWORD_FILE), 'the password file is a secret mc receives');
    for (const port of mc.ports ?? []) assert.doesNotMatch(port, /25575/, 'RCON must not be published outside the compose network');
  });

  test("runs porter's image of this version as a sidecar whose mounted config loads and reaches mc, with the Dockerfile's health check", async () => {
    const compose = (await loadYaml(readRepoFile('docker-compose.example.yml'))) as Compose;
    const porter = compose.services.porter!;
    const mcVars = env(compose.services.mc!);
    assert.equal(porter.image, (await projectUrls()).image);
    assert.ok(porter.depends_on?.mc, 'porter starts after mc');
    // The OCI archive has no HEALTHCHECK: the service says the Dockerfile's again, exactly.
    const [, command, , interval, , timeout, , startPeriod, , retries] = healthFlags();
    assert.deepEqual(porter.healthcheck, {
      test: ['CMD', 'node', '-e', /^node -e "(.*)"$/.exec(command!)![1]!],
      interval,
      timeout,
      start_period: startPeriod,
      retries: Number(retries),
    });

    const runtime = parseDockerfile(readRepoFile('Dockerfile')).stages.at(-1)!;
    const imageEnv = runtime.instructions.filter((i) => i.keyword === 'ENV').map((i) => i.args);
    const configPath = imageEnv.find((e) => e.startsWith('PORTER_CONFIG='))!.split('=')[1]!;
    const healthPort = Number(imageEnv.find((e) => e.startsWith('PORTER_HEALTH_PORT='))!.split('=')[1]);
    const stateVolume = (JSON.parse(runtime.instructions.find((i) => i.keyword === 'VOLUME')!.args) as string[])[0]!;

    const mounts = (porter.volumes ?? []).map((v) => v.split(':'));
    const configMount = mounts.find((m) => m[1] === configPath);
    assert.ok(configMount, `a config file is mounted at ${configPath}`);
    assert.equal(configMount[2], 'ro', 'the config is mounted read-only');
    const stateMount = mounts.find((m) => m[1] === stateVolume);
    assert.ok(stateMount && compose.volumes && stateMount[0]! in compose.volumes, `a named volume holds ${stateVolume}`);

    const drainMs = configSchema.parse(JSON.parse(readRepoFile('docs/examples/config.compose.json'))).shutdown.drainMs;
    assert.ok(seconds(porter.stop_grace_period) >= drainMs / 1000 + 5, 'stop_grace_period leaves room for the drain');
    assert.equal(porter.read_only, true);
    assert.deepEqual(porter.cap_drop, ['ALL']);

    for (const name of Object.keys(compose.secrets ?? {})) assert.ok(compose.secrets![name]!.file, `secret ${name} comes from a file`);

    // The example config the guide tells users to copy to ./porter/config.json.
    const raw = JSON.parse(readRepoFile('docs/examples/config.compose.json')) as {
      api: { tokenFile: string };
      servers: { executor: { passwordFile: string } }[];
    };
    const config = await parseConfig(raw, repoPath('docs/examples'), {
      PORTER_API_TOKEN: 'gci_test_token',
      PORTER_RCON_PASSWORD: 'test-password',
    });
    const executor = config.servers[0]!.executor;
    assert.equal(executor.type, 'rcon');
    assert.ok(executor.type === 'rcon');
    assert.equal(executor.host, 'mc', 'RCON host is the compose service name');
    assert.equal(String(executor.port), mcVars.RCON_PORT);
    assert.equal(config.stateDir, stateVolume);
    assert.equal(parseListen(config.health!.listen).port, healthPort, 'HEALTHCHECK probes the port porter listens on');
    assert.ok(secretPaths(porter).includes(raw.api.tokenFile), 'api.tokenFile is a secret porter receives');
    assert.ok(secretPaths(porter).includes(raw.servers[0]!.executor.passwordFile), 'passwordFile is a secret porter receives');
    if (mcVars.RCON_PASSWORD_FILE)
      assert.equal(raw.servers[0]!.executor.passwordFile, mcVars.RCON_PASSWORD_FILE, 'one password file for both');
  });

  test("docs/install.md's run line gives the image's health check as the Dockerfile has it", () => {
    const flags = healthFlags();
    const install = readRepoFile('docs/install.md');
    const shellQuoted = `--health-cmd "${flags[1]!.replaceAll('"', '\\"')}"`;
    assert.ok(install.includes(shellQuoted), `docs/install.md#container has no ${shellQuoted}`);
    for (let i = 2; i < flags.length; i += 2)
      assert.ok(install.includes(`${flags[i]} ${flags[i + 1]}`), `docs/install.md#container has no ${flags[i]} ${flags[i + 1]}`);
  });
});
