import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { PodMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/PodMonitor';
import { PrometheusRule } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/PrometheusRule';
import { parseDockerfile } from './dockerfile.js';
import { headingAnchors } from './markdown.js';
import { readRepoFile } from './repo.js';
import { missingTool, run } from './run.js';
import { loadYaml, loadYamlDocuments, yamlMissing } from './yaml.js';

/**
 * deploy/kubernetes/prometheus-operator.yaml for kube-prometheus-stack users: its PodMonitor and
 * PrometheusRule are valid against the Prometheus Operator's monitoring.coreos.com/v1 schemas
 * (@kubernetes-models/prometheus-operator, generated from the Operator's CRDs), the rule groups
 * are the same as deploy/prometheus/porter-alerts.yml (which promtool checks and unit-tests in
 * prometheus.test.ts) and promtool accepts them as they are, the PodMonitor selects every example
 * pod that runs porter at the port porter serves /metrics on, and every alert's runbook_url is a
 * section of docs/operations.md under the repository's own address (the image's source label).
 */

const skip = (await yamlMissing()) || missingTool('promtool', 'apt-get install prometheus');
const FILE = 'deploy/kubernetes/prometheus-operator.yaml';
const EXAMPLES = [
  'deploy/kubernetes/minecraft-sidecar.yaml',
  'deploy/kubernetes/porter-pool.yaml',
  'deploy/kubernetes/agones-gameserver.yaml',
  'deploy/kubernetes/agones-fleet.yaml',
];

interface Rule {
  alert: string;
  annotations: Record<string, string>;
}
interface Manifest {
  kind: string;
  metadata: { name: string; labels?: Record<string, string> };
  spec: Record<string, unknown>;
}
type Container = { name: string; ports?: Array<{ name?: string; containerPort: number }> };
interface PodTemplate {
  metadata?: { labels?: Record<string, string> };
  spec: { containers: Container[]; initContainers?: Container[] };
}

/** Every pod template in a manifest: a StatefulSet's, a GameServer's, a Fleet's GameServer's. */
function podTemplates(doc: Manifest): PodTemplate[] {
  const spec = doc.spec as { template?: { spec?: { template?: PodTemplate } } & PodTemplate };
  if (doc.kind === 'StatefulSet') return [spec.template!];
  if (doc.kind === 'GameServer') return [spec.template!];
  if (doc.kind === 'Fleet') return [spec.template!.spec.template!];
  return [];
}

/** The repository's address, as the image's OCI source label gives it by default. */
function sourceUrl(): string {
  const runtime = parseDockerfile(readRepoFile('Dockerfile')).stages.at(-1)!;
  const arg = runtime.instructions.find((i) => i.keyword === 'ARG' && i.args.startsWith('PORTER_SOURCE='))!;
  return arg.args.slice('PORTER_SOURCE='.length);
}

describe('deploy/kubernetes/prometheus-operator.yaml', { skip }, () => {
  const load = async () => (await loadYamlDocuments(readRepoFile(FILE))) as Manifest[];

  test("a PodMonitor and a PrometheusRule, valid against the Operator's schemas", async () => {
    const docs = await load();
    assert.deepEqual(
      docs.map((d) => d.kind),
      ['PodMonitor', 'PrometheusRule'],
    );
    assert.doesNotThrow(() => new PodMonitor(docs[0] as never).validate());
    assert.doesNotThrow(() => new PrometheusRule(docs[1]).validate());
    // The schemas are enforced: a rule without its expression is refused.
    const broken = structuredClone(docs[1]!) as unknown as { spec: { groups: Array<{ rules: Array<Record<string, unknown>> }> } };
    delete broken.spec.groups[0]!.rules[0]!.expr;
    assert.throws(() => new PrometheusRule(broken as never).validate(), /expr/);
  });

  test('the PrometheusRule holds the alerts of porter-alerts.yml, and promtool accepts them', async () => {
    const rule = (await load())[1]!;
    const alerts = (await loadYaml(readRepoFile('deploy/prometheus/porter-alerts.yml'))) as { groups: unknown };
    assert.deepEqual(rule.spec.groups, alerts.groups);
    const dir = mkdtempSync(join(tmpdir(), 'porter-rule-'));
    try {
      writeFileSync(join(dir, 'rules.json'), JSON.stringify({ groups: rule.spec.groups }));
      const result = await run('promtool', ['check', 'rules', join(dir, 'rules.json')], { timeoutMs: 60_000 });
      assert.equal(result.code, 0, result.stdout + result.stderr);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('the PodMonitor selects every example pod that runs porter, at its metrics port', async () => {
    const monitor = (await load())[0]!.spec as {
      selector: { matchLabels: Record<string, string> };
      podMetricsEndpoints: Array<{ port: string; path: string }>;
    };
    assert.deepEqual(
      monitor.podMetricsEndpoints.map((e) => e.path),
      ['/metrics'],
    );
    let pods = 0;
    for (const file of EXAMPLES) {
      for (const doc of (await loadYamlDocuments(readRepoFile(file))) as Manifest[]) {
        for (const template of podTemplates(doc)) {
          const porter = [...template.spec.containers, ...(template.spec.initContainers ?? [])].find((c) => c.name === 'porter');
          assert.ok(porter, `${file}: a pod runs porter`);
          for (const [key, value] of Object.entries(monitor.selector.matchLabels)) {
            assert.equal(template.metadata?.labels?.[key], value, `${file}: the pod carries ${key}=${value}`);
          }
          for (const endpoint of monitor.podMetricsEndpoints) {
            assert.ok(
              porter.ports?.some((p) => p.name === endpoint.port),
              `${file}: porter names its port ${endpoint.port}`,
            );
          }
          pods += 1;
        }
      }
    }
    assert.equal(pods, EXAMPLES.length);
  });

  test("every alert has a runbook_url into a section of docs/operations.md, at the repository's address", async () => {
    const operations = headingAnchors(readRepoFile('docs/operations.md'));
    const alerts = (await loadYaml(readRepoFile('deploy/prometheus/porter-alerts.yml'))) as { groups: Array<{ rules: Rule[] }> };
    const rules = alerts.groups.flatMap((g) => g.rules);
    assert.ok(rules.length >= 7);
    for (const rule of rules) {
      const url = rule.annotations.runbook_url ?? '';
      const prefix = `${sourceUrl()}/blob/main/docs/operations.md#`;
      assert.ok(url.startsWith(prefix), `${rule.alert}: ${url}`);
      const anchor = url.slice(prefix.length);
      assert.ok(operations.has(anchor), `${rule.alert}: docs/operations.md has no section #${anchor}`);
      assert.equal(anchor, rule.alert.toLowerCase(), 'each alert has its own section');
    }
  });
});
