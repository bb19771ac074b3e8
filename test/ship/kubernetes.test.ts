import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { posix } from 'node:path';
import { parseConfig } from '../../src/config/load.js';
import { parseShard } from '../../src/config/shard.js';
import { parseListen } from '../../src/health/listen.js';
import { parseDockerfile } from './dockerfile.js';
import { readRepoFile, repoPath } from './repo.js';
import { loadYamlDocuments, yamlMissing } from './yaml.js';
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap';
import { Secret } from 'kubernetes-models/v1/Secret';
import { Service } from 'kubernetes-models/v1/Service';
import { StatefulSet } from 'kubernetes-models/apps/v1/StatefulSet';
import { PodTemplateSpec } from 'kubernetes-models/v1/PodTemplateSpec';

/**
 * The manifests in deploy/kubernetes/ are validated against the Kubernetes API's own schemas
 * (kubernetes-models, generated from the OpenAPI spec: types, required fields, enums), and then
 * against porter: the config in each ConfigMap loads, its secrets come from mounted Secrets
 * (never an env literal), its state directory is a volume from volumeClaimTemplates (never an
 * emptyDir), the probes reach the port porter listens on, and the container runs locked down.
 */

/** apiVersion/kind → a validation by the kubernetes-models class of that kind (it throws on the first problem). */
const VALIDATE: Record<string, (data: never) => void> = {
  'v1/ConfigMap': (data) => new ConfigMap(data).validate(),
  'v1/Secret': (data) => new Secret(data).validate(),
  'v1/Service': (data) => new Service(data).validate(),
  'apps/v1/StatefulSet': (data) => new StatefulSet(data).validate(),
};

interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string };
  data?: Record<string, string>;
  spec?: StatefulSetSpec;
}
interface Container {
  name: string;
  image: string;
  args?: string[];
  env?: Array<{ name: string; value?: string; valueFrom?: unknown }>;
  ports?: Array<{ name?: string; containerPort: number }>;
  readinessProbe?: { httpGet?: { path: string; port: string | number } };
  livenessProbe?: { httpGet?: { path: string; port: string | number } };
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  securityContext?: {
    runAsNonRoot?: boolean;
    readOnlyRootFilesystem?: boolean;
    allowPrivilegeEscalation?: boolean;
    capabilities?: { drop?: string[] };
  };
  volumeMounts?: Array<{ name: string; mountPath: string; readOnly?: boolean }>;
}
interface StatefulSetSpec {
  replicas?: number;
  template: {
    spec: {
      containers: Container[];
      volumes?: Array<{ name: string; configMap?: { name: string }; secret?: { secretName: string }; emptyDir?: unknown }>;
      terminationGracePeriodSeconds?: number;
    };
  };
  volumeClaimTemplates?: Array<{ metadata: { name: string } }>;
}

const FILES = ['deploy/kubernetes/minecraft-sidecar.yaml', 'deploy/kubernetes/porter-pool.yaml'];

const skip = await yamlMissing();

async function manifests(file: string): Promise<Manifest[]> {
  return (await loadYamlDocuments(readRepoFile(file))).filter((doc) => doc !== null) as Manifest[];
}

/** The volume mounted at the folder holding `path` in `container`. */
function volumeOf(container: Container, path: string): string | undefined {
  const mount = (container.volumeMounts ?? [])
    .filter((m) => path === m.mountPath || path.startsWith(`${m.mountPath}/`))
    .sort((a, b) => b.mountPath.length - a.mountPath.length)[0];
  return mount?.name;
}

interface PodTemplate {
  spec: {
    containers: Container[];
    initContainers?: Array<Container & { restartPolicy?: string }>;
    volumes?: Array<{ name: string; configMap?: { name: string }; secret?: { secretName: string } }>;
  };
}

/** The pod's long-running containers: its containers and its native sidecars (init containers with restartPolicy Always). */
function runningContainers(template: PodTemplate): Container[] {
  return [...template.spec.containers, ...(template.spec.initContainers ?? []).filter((c) => c.restartPolicy === 'Always')];
}

/** The porter container of a pod template: its config (from a ConfigMap in `docs`) loads and its secrets are mounted files. */
async function checkPorterConfig(docs: Manifest[], template: PodTemplate) {
  const porter = runningContainers(template).find((c) => c.name === 'porter')!;
  const configPath = porter.env?.find((e) => e.name === 'PORTER_CONFIG')?.value ?? '/etc/porter/config.json';
  const volume = template.spec.volumes!.find((v) => v.name === volumeOf(porter, configPath))!;
  const configMap = docs.find((d) => d.kind === 'ConfigMap' && d.metadata.name === volume.configMap?.name);
  assert.ok(configMap, `${configPath} comes from a ConfigMap in the same file`);
  const raw = JSON.parse(configMap.data![posix.basename(configPath)]!) as {
    api: { tokenFile?: string };
    servers: Array<{ executor: { passwordFile?: string } }>;
  };
  for (const path of [raw.api.tokenFile!, ...raw.servers.map((s) => s.executor.passwordFile!)]) {
    assert.ok(template.spec.volumes!.find((v) => v.name === volumeOf(porter, path))?.secret, `${path} is in a mounted Secret`);
  }
  for (const variable of porter.env ?? []) assert.doesNotMatch(variable.name, /TOKEN|PASSWORD/, 'no secret in the environment');
  return parseConfig(raw, repoPath('.'), { PORTER_API_TOKEN: 'gci_test_token', PORTER_RCON_PASSWORD: 'test-password' });
}

describe('deploy/kubernetes/', { skip }, () => {
  for (const file of FILES) {
    test(`${file}: every object is valid against the Kubernetes API schema`, async () => {
      const docs = await manifests(file);
      assert.ok(docs.length >= 3, 'the file holds its objects');
      for (const doc of docs) {
        const validate = VALIDATE[`${doc.apiVersion}/${doc.kind}`];
        assert.ok(validate, `${doc.kind} ${doc.apiVersion} has a validator here`);
        assert.doesNotThrow(() => validate(doc as never), `${doc.kind}/${doc.metadata.name}`);
      }
    });

    test(`${file}: porter's container loads its config, reads secrets from files and journals on a claimed volume`, async () => {
      const docs = await manifests(file);
      const set = docs.find((d) => d.kind === 'StatefulSet')!;
      const spec = set.spec!;
      const porter = spec.template.spec.containers.find((c) => c.name === 'porter')!;
      assert.ok(porter, 'a container named porter');

      const runtime = parseDockerfile(readRepoFile('Dockerfile')).stages.at(-1)!;
      const imageEnv = runtime.instructions.filter((i) => i.keyword === 'ENV').map((i) => i.args);
      const configPath =
        porter.env?.find((e) => e.name === 'PORTER_CONFIG')?.value ?? imageEnv.find((e) => e.startsWith('PORTER_CONFIG='))!.split('=')[1]!;
      const configVolume = spec.template.spec.volumes!.find((v) => v.name === volumeOf(porter, configPath))!;
      const configMap = docs.find((d) => d.kind === 'ConfigMap' && d.metadata.name === configVolume.configMap?.name);
      assert.ok(configMap, `${configPath} comes from a ConfigMap in the file`);
      const raw = JSON.parse(configMap.data![posix.basename(configPath)]!) as {
        api: { tokenFile?: string; token?: string };
        servers: Array<{ executor: { passwordFile?: string; password?: string } }>;
      };
      assert.equal(raw.api.token, undefined, 'no token literal in the config');
      const config = await parseConfig(raw, repoPath('.'), { PORTER_API_TOKEN: 'gci_test_token', PORTER_RCON_PASSWORD: 'test-password' });

      // Secrets: files from mounted Secrets, never an env literal.
      for (const path of [raw.api.tokenFile!, ...raw.servers.map((s) => s.executor.passwordFile!)]) {
        assert.ok(path, 'every secret is a file');
        const volume = spec.template.spec.volumes!.find((v) => v.name === volumeOf(porter, path));
        assert.ok(volume?.secret, `${path} is in a mounted Secret`);
      }
      for (const variable of porter.env ?? []) assert.doesNotMatch(variable.name, /TOKEN|PASSWORD/, 'no secret in the environment');

      // The journal: a volume from volumeClaimTemplates, never an emptyDir.
      const stateVolume = volumeOf(porter, config.stateDir);
      assert.ok(stateVolume, `${config.stateDir} is mounted`);
      assert.ok(
        spec.volumeClaimTemplates?.some((t) => t.metadata.name === stateVolume),
        `${config.stateDir} is a PersistentVolumeClaim from volumeClaimTemplates`,
      );
      assert.equal(spec.template.spec.volumes?.find((v) => v.name === stateVolume)?.emptyDir, undefined);

      // Probes on /healthz at the port porter listens on.
      const listenPort = parseListen(config.health!.listen).port;
      const portOf = (port: string | number) =>
        typeof port === 'number' ? port : porter.ports!.find((p) => p.name === port)!.containerPort;
      for (const probe of [porter.readinessProbe, porter.livenessProbe]) {
        assert.equal(probe?.httpGet?.path, '/healthz');
        assert.equal(portOf(probe.httpGet.port), listenPort);
      }

      // Locked down, with requests to schedule by and room for the drain on SIGTERM.
      assert.equal(porter.securityContext?.runAsNonRoot, true);
      assert.equal(porter.securityContext?.readOnlyRootFilesystem, true);
      assert.equal(porter.securityContext?.allowPrivilegeEscalation, false);
      assert.deepEqual(porter.securityContext?.capabilities?.drop, ['ALL']);
      assert.ok(porter.resources?.requests?.cpu && porter.resources.requests.memory, 'resource requests');
      assert.ok((spec.template.spec.terminationGracePeriodSeconds ?? 30) >= config.shutdown.drainMs / 1000 + 5);

      // A sharded pool: N equals replicas, and auto takes the pod's ordinal.
      const shardAt = porter.args?.indexOf('--shard') ?? -1;
      if (shardAt >= 0) {
        const shard = parseShard(porter.args![shardAt + 1]!, '--shard', `${set.metadata.name}-${spec.replicas! - 1}`);
        assert.equal(shard.count, spec.replicas, 'replicas and N are the same number');
      }
    });
  }

  test('the pool runs sharded and the sidecar next to its game server over localhost', async () => {
    const pool = (await manifests('deploy/kubernetes/porter-pool.yaml')).find((d) => d.kind === 'StatefulSet')!;
    assert.ok(pool.spec!.template.spec.containers[0]!.args?.includes('--shard'));
    const sidecar = await manifests('deploy/kubernetes/minecraft-sidecar.yaml');
    const config = JSON.parse(sidecar.find((d) => d.kind === 'ConfigMap')!.data!['config.json']!) as {
      servers: Array<{ executor: { host: string } }>;
    };
    assert.equal(config.servers[0]!.executor.host, '127.0.0.1', 'RCON over the pod’s localhost');
    const containers = sidecar.find((d) => d.kind === 'StatefulSet')!.spec!.template.spec.containers.map((c) => c.image);
    assert.ok(containers.some((image) => image.startsWith('itzg/minecraft-server')));
  });

  describe('Agones GameServer and Fleet', () => {
    /*
     * Agones objects are custom resources, outside kubernetes-models. Their fields are checked
     * against Agones' own CRDs (googleforgames/agones install/helm/agones/templates/crds/
     * _gameserverspecschema.yaml and fleet.yaml): the GameServer spec's keys, its required
     * `template`, the enums of portPolicy, protocol, scheduling and the fleet strategy; the pod
     * template inside is a core/v1 PodTemplateSpec and goes through kubernetes-models.
     */
    const GAMESERVER_SPEC_KEYS = [
      'template',
      'container',
      'ports',
      'sdkServer',
      'scheduling',
      'health',
      'players',
      'counters',
      'lists',
      'eviction',
      'immutableReplicas',
    ];
    const PORT_KEYS = ['name', 'range', 'portPolicy', 'protocol', 'container', 'containerPort', 'hostPort'];
    const HEALTH_KEYS = ['disabled', 'initialDelaySeconds', 'periodSeconds', 'failureThreshold'];
    const FLEET_SPEC_KEYS = ['replicas', 'allocationOverflow', 'scheduling', 'strategy', 'priorities', 'template'];

    interface GameServerSpec {
      template: unknown;
      container?: string;
      ports?: Array<Record<string, unknown>>;
      health?: Record<string, unknown>;
      scheduling?: string;
    }

    function checkGameServerSpec(spec: GameServerSpec, where: string): void {
      for (const key of Object.keys(spec)) assert.ok(GAMESERVER_SPEC_KEYS.includes(key), `${where}.${key} is a GameServer spec field`);
      assert.ok(spec.template, `${where}.template is required`);
      for (const port of spec.ports ?? []) {
        for (const key of Object.keys(port)) assert.ok(PORT_KEYS.includes(key), `${where}.ports[].${key}`);
        if (port.portPolicy !== undefined) assert.ok(['Dynamic', 'Static', 'Passthrough', 'None'].includes(port.portPolicy as string));
        if (port.protocol !== undefined) assert.ok(['UDP', 'TCP', 'TCPUDP'].includes(port.protocol as string));
      }
      for (const key of Object.keys(spec.health ?? {})) assert.ok(HEALTH_KEYS.includes(key), `${where}.health.${key}`);
      if (spec.scheduling !== undefined) assert.ok(['Packed', 'Distributed'].includes(spec.scheduling));
      assert.doesNotThrow(() => new PodTemplateSpec(spec.template as never).validate(), `${where}.template is a PodTemplateSpec`);
      const pod = spec.template as PodTemplate;
      const names = runningContainers(pod).map((c) => c.name);
      if (spec.container !== undefined) assert.ok(names.includes(spec.container), `${where}.container names a container`);
      assert.ok(names.includes('porter'), 'porter runs beside the game server');
      // Agones runs its SDK server as a native sidecar (SidecarContainers, on by default since 1.56) and a main
      // container that exits makes the GameServer Unhealthy: porter is a native sidecar, restarted on its own.
      assert.equal(pod.spec.initContainers?.find((c) => c.name === 'porter')?.restartPolicy, 'Always', 'porter is a native sidecar');
      assert.equal((pod as { metadata?: { labels?: Record<string, string> } }).metadata?.labels?.['porter.metrics/scrape'], 'true');
    }

    test("deploy/kubernetes/agones-gameserver.yaml holds a GameServer with the fields of Agones' CRD", async () => {
      const docs = await manifests('deploy/kubernetes/agones-gameserver.yaml');
      const gameServer = docs.find((d) => d.kind === 'GameServer') as unknown as { apiVersion: string; spec: GameServerSpec };
      assert.equal(gameServer.apiVersion, 'agones.dev/v1');
      checkGameServerSpec(gameServer.spec, 'spec');
      await checkPorterConfig(docs, gameServer.spec.template as PodTemplate);
    });

    test("deploy/kubernetes/agones-fleet.yaml holds a Fleet with the fields of Agones' CRD, its budget shared between replicas", async () => {
      const docs = await manifests('deploy/kubernetes/agones-fleet.yaml');
      const fleet = docs.find((d) => d.kind === 'Fleet') as unknown as {
        apiVersion: string;
        spec: { replicas: number; scheduling?: string; strategy?: { type?: string }; template: { spec: GameServerSpec } };
      };
      assert.equal(fleet.apiVersion, 'agones.dev/v1');
      for (const key of Object.keys(fleet.spec)) assert.ok(FLEET_SPEC_KEYS.includes(key), `spec.${key} is a Fleet spec field`);
      if (fleet.spec.strategy?.type !== undefined) assert.ok(['Recreate', 'RollingUpdate'].includes(fleet.spec.strategy.type));
      checkGameServerSpec(fleet.spec.template.spec, 'spec.template.spec');
      const config = await checkPorterConfig(docs, fleet.spec.template.spec.template as PodTemplate);
      assert.ok(config.api.budget.share * fleet.spec.replicas <= 1, 'the replicas together stay within the server budget');
    });
  });
});
