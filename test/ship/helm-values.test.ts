import assert from 'node:assert/strict';
import { posix } from 'node:path';
import { describe, test } from 'node:test';
import { PodTemplateSpec } from 'kubernetes-models/v1/PodTemplateSpec';
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap';
import { parseConfig } from '../../src/config/load.js';
import { parseListen } from '../../src/health/listen.js';
import { CHART_DEFAULTS, chartPaths, fullname, merge, tpl } from './helm-chart.js';
import { readRepoFile, repoPath } from './repo.js';
import { loadYaml, loadYamlDocuments, yamlMissing } from './yaml.js';

/**
 * deploy/helm/minecraft-porter-values.yaml against the itzg/minecraft-server chart as published
 * (helm-chart.ts says what of the chart is taken and from where): every key it sets is one of the
 * chart's, the pod the chart would render from it is a valid pod, porter's sidecar reads the
 * very Secret the chart gives the game for RCON, its config (the ConfigMap the chart deploys)
 * loads and reaches the game's RCON port on the pod's loopback, and its journal is on the
 * chart's PersistentVolumeClaim, never an emptyDir.
 */

const skip = await yamlMissing();
const FILE = 'deploy/helm/minecraft-porter-values.yaml';
const RELEASE = 'survival';

type Values = Record<string, unknown>;
interface Container {
  name: string;
  image?: string;
  env?: Array<{ name: string; value?: string; valueFrom?: { secretKeyRef?: { name: string; key: string } } }>;
  ports?: Array<{ name: string; containerPort: number }>;
  readinessProbe?: { httpGet: { path: string; port: string } };
  livenessProbe?: { httpGet: { path: string; port: string } };
  securityContext?: Record<string, unknown>;
  volumeMounts?: Array<{ name: string; mountPath: string; subPath?: string; readOnly?: boolean }>;
}
interface Volume {
  name: string;
  emptyDir?: unknown;
  persistentVolumeClaim?: { claimName: string };
  configMap?: { name: string };
  secret?: { secretName: string };
}

/** Strings anywhere in a value, run through tpl (tplRender on a sidecar or an extraDeploy entry). */
function render<T>(value: T, values: Values): T {
  if (typeof value === 'string') return tpl(value, { values, release: RELEASE }) as T;
  if (Array.isArray(value)) return value.map((v: unknown) => render(v, values)) as T;
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, render(v, values)])) as T;
  return value;
}

/** The chart's RCON Secret as templates/secrets.yaml and deployment.yaml name it. */
function rconSecret(values: Values): { name: string; key: string } {
  const rcon = (values.minecraftServer as { rcon: { existingSecret: string | null; secretKey: string | null } }).rcon;
  return { name: rcon.existingSecret || `${fullname(RELEASE)}-rcon`, key: rcon.secretKey || 'rcon-password' };
}

/** The pod template deployment.yaml renders (the parts porter's values reach), and the objects of extraDeploy. */
async function renderChart(overrides: Values = {}) {
  const own = (await loadYaml(readRepoFile(FILE))) as Values;
  const values = merge(merge(CHART_DEFAULTS, own), overrides);
  const name = fullname(RELEASE);
  const rcon = (values.minecraftServer as { rcon: { enabled: boolean } }).rcon;
  const game: Container = {
    name,
    image: `${(values.image as { repository: string }).repository}:${(values.image as { tag: string }).tag}`,
    env: rcon.enabled
      ? [
          { name: 'ENABLE_RCON', value: 'true' },
          { name: 'RCON_PASSWORD', valueFrom: { secretKeyRef: rconSecret(values) } },
        ]
      : [],
    volumeMounts: [
      { name: 'tmp', mountPath: '/tmp' },
      { name: 'datadir', mountPath: '/data' },
      { name: 'backupdir', mountPath: '/backups', readOnly: true },
    ],
  };
  const persistent = (values.persistence as { dataDir: { enabled: boolean } }).dataDir.enabled;
  const extraVolumes = (values.extraVolumes as Array<{ volumes?: Volume[] }>).flatMap((e) => e.volumes ?? []);
  const volumes: Volume[] = [
    { name: 'tmp', emptyDir: {} },
    persistent ? { name: 'datadir', persistentVolumeClaim: { claimName: `${name}-datadir` } } : { name: 'datadir', emptyDir: {} },
    { name: 'backupdir', emptyDir: {} },
    ...extraVolumes,
  ];
  const sidecars = render(values.sidecarContainers as Container[], values);
  const labels: Record<string, string> = { app: name, ...(values.podLabels as Record<string, string>) };
  const pod = { metadata: { labels }, spec: { securityContext: values.podSecurityContext, containers: [game, ...sidecars], volumes } };
  const extra = (
    await Promise.all((values.extraDeploy as string[]).map(async (entry) => loadYamlDocuments(render(entry, values))))
  ).flat() as Array<{ kind: string; metadata: { name: string }; data?: Record<string, string> }>;
  return { values, pod, sidecars, volumes, extra };
}

/** Maps whose keys are the user's own (labels), not values of the chart. */
const FREE_MAPS = new Set(['podLabels']);

function leafPaths(value: unknown, prefix = ''): string[] {
  if (value === null || typeof value !== 'object' || Array.isArray(value) || FREE_MAPS.has(prefix)) return [prefix];
  return Object.entries(value).flatMap(([k, v]) => leafPaths(v, prefix ? `${prefix}.${k}` : k));
}

describe('deploy/helm/minecraft-porter-values.yaml with the itzg/minecraft-server chart', { skip }, () => {
  test("sets only the chart's own keys", async () => {
    const own = (await loadYaml(readRepoFile(FILE))) as Values;
    const known = new Set(chartPaths());
    for (const path of leafPaths(own)) assert.ok(known.has(path), `${path} is not a value of the chart`);
  });

  test('the pod it renders is valid, and porter is one of its containers, locked down', async () => {
    const { pod, sidecars, values } = await renderChart();
    assert.doesNotThrow(() => new PodTemplateSpec(pod as never).validate());
    const porter = sidecars.find((c) => c.name === 'porter');
    assert.ok(porter, 'a porter sidecar');
    assert.equal(porter.securityContext?.readOnlyRootFilesystem, true);
    assert.equal(porter.securityContext?.allowPrivilegeEscalation, false);
    assert.deepEqual(porter.securityContext?.capabilities, { drop: ['ALL'] });
    assert.equal(values.strategyType, 'Recreate', 'never two pods on one journal');
    assert.equal(pod.metadata.labels['porter.metrics/scrape'], 'true', 'the PodMonitor selects it');
  });

  test("porter reads the chart's own RCON Secret, by default and with existingSecret", async () => {
    for (const overrides of [{}, { minecraftServer: { rcon: { existingSecret: 'my-rcon', secretKey: 'pw' } } }]) {
      const { sidecars, pod, values } = await renderChart(overrides);
      const porter = sidecars.find((c) => c.name === 'porter')!;
      const game = pod.spec.containers[0]!;
      const fromGame = game.env!.find((e) => e.name === 'RCON_PASSWORD')!.valueFrom!.secretKeyRef;
      const fromPorter = porter.env!.find((e) => e.name === 'PORTER_RCON_PASSWORD')!.valueFrom!.secretKeyRef;
      assert.deepEqual(fromPorter, fromGame);
      assert.deepEqual(fromPorter, rconSecret(values));
      for (const variable of porter.env ?? [])
        assert.ok(variable.value === undefined || !/TOKEN|PASSWORD/.test(variable.name), 'no secret literal');
    }
    assert.deepEqual(rconSecret(CHART_DEFAULTS), { name: 'survival-minecraft-rcon', key: 'rcon-password' });
  });

  test("its config (the ConfigMap it deploys) loads and reaches the game's RCON port on the pod's loopback", async () => {
    for (const port of [25575, 25580]) {
      const { sidecars, volumes, extra } = await renderChart({ minecraftServer: { rcon: { port } } });
      const porter = sidecars.find((c) => c.name === 'porter')!;
      const configPath = porter.env!.find((e) => e.name === 'PORTER_CONFIG')!.value!;
      const mount = porter.volumeMounts!.find((m) => m.mountPath === posix.dirname(configPath))!;
      const configMapName = volumes.find((v) => v.name === mount.name)!.configMap!.name;
      const configMap = extra.find((o) => o.kind === 'ConfigMap' && o.metadata.name === configMapName);
      assert.ok(configMap, `the ConfigMap ${configMapName} is deployed with the release`);
      assert.doesNotThrow(() => new ConfigMap(configMap).validate());
      const raw = JSON.parse(configMap.data![posix.basename(configPath)]!) as { api: { tokenFile: string } };
      const config = await parseConfig(raw, repoPath('.'), { PORTER_API_TOKEN: 'gci_test_token', PORTER_RCON_PASSWORD: 'test-password' });
      const executor = config.servers[0]!.executor as { host: string; port: number };
      assert.deepEqual({ host: executor.host, port: executor.port }, { host: '127.0.0.1', port });
      const tokenMount = porter.volumeMounts!.find((m) => raw.api.tokenFile.startsWith(`${m.mountPath}/`))!;
      assert.ok(volumes.find((v) => v.name === tokenMount.name)?.secret, 'the token is a file from a Secret');
      const health = parseListen(config.health!.listen).port;
      for (const probe of [porter.readinessProbe, porter.livenessProbe]) {
        assert.equal(probe?.httpGet.path, '/healthz');
        assert.equal(porter.ports!.find((p) => p.name === probe.httpGet.port)?.containerPort, health);
      }
    }
  });

  test("the journal is on the chart's PersistentVolumeClaim (its own folder), never an emptyDir", async () => {
    const journalVolume = async (overrides: Values) => {
      const { sidecars, volumes, extra } = await renderChart(overrides);
      const porter = sidecars.find((c) => c.name === 'porter')!;
      const config = JSON.parse(extra.find((o) => o.kind === 'ConfigMap')!.data!['config.json']!) as { stateDir: string };
      const mount = porter.volumeMounts!.find((m) => m.mountPath === config.stateDir)!;
      return { mount, volume: volumes.find((v) => v.name === mount.name)! };
    };
    const { mount, volume } = await journalVolume({});
    assert.deepEqual(volume.persistentVolumeClaim, { claimName: 'survival-minecraft-datadir' });
    assert.ok(mount.subPath, 'a folder of its own on the game data volume');
    // The check is real: with the chart's persistence off, the same mount lands on an emptyDir.
    const off = await journalVolume({ persistence: { dataDir: { enabled: false } } });
    assert.ok(off.volume.emptyDir !== undefined);
  });
});
