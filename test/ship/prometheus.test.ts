import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { loadYaml, yamlMissing } from './yaml.js';
import { repoPath, readRepoFile } from './repo.js';
import { missingTool, run } from './run.js';
import { startBed, WAIT, SIM_SERVER_ID, type TestBed, type PorterProcess } from '../integration/harness.js';
import { waitFor } from '../helpers/wait-for.js';

/**
 * What deploy/ ships for Prometheus and Grafana, checked with the real tool: promtool checks the
 * alert rules and runs their unit tests, and lints a live scrape of a running porter; every
 * metric the rules and the dashboard query must be in that scrape, so a renamed metric cannot
 * leave an alert that never fires or a panel that stays empty.
 */

const skip = missingTool('promtool', 'apt-get install prometheus') || (await yamlMissing());

const RULES = 'deploy/prometheus/porter-alerts.yml';
const RULE_TESTS = 'deploy/prometheus/porter-alerts.test.yml';
const DASHBOARD = 'deploy/grafana/porter.json';

/** Metric names a PromQL expression reads: identifiers followed by `{` or standing alone before an operator. */
function metricsIn(expr: string): string[] {
  const names = new Set<string>();
  for (const match of expr.matchAll(/\b(porter_[a-z0-9_]+|nodejs_[a-z0-9_]+|process_[a-z0-9_]+)\b/g)) names.add(match[1]!);
  return [...names];
}

/** The families of a Prometheus text exposition (from its # TYPE lines), with a histogram's series names. */
function familiesOf(scrape: string): Set<string> {
  const families = new Set<string>();
  for (const line of scrape.split('\n')) {
    const match = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (!match) continue;
    const [, name, type] = match;
    families.add(name!);
    if (type === 'histogram' || type === 'summary') for (const suffix of ['_bucket', '_sum', '_count']) families.add(`${name!}${suffix}`);
  }
  return families;
}

async function ruleExpressions(): Promise<string[]> {
  const rules = (await loadYaml(readRepoFile(RULES))) as { groups: Array<{ rules: Array<{ expr: string }> }> };
  return rules.groups.flatMap((group) => group.rules.map((rule) => rule.expr));
}

function dashboardExpressions(): string[] {
  const dashboard = JSON.parse(readRepoFile(DASHBOARD)) as { panels: Array<{ targets?: Array<{ expr: string }> }> };
  return dashboard.panels.flatMap((panel) => (panel.targets ?? []).map((target) => target.expr));
}

describe('deploy/prometheus and deploy/grafana against promtool and a live scrape', { skip }, () => {
  let bed: TestBed;
  let porter: PorterProcess;
  let scrape = '';

  before(async () => {
    bed = await startBed();
    bed.writeConfig((config) => Object.assign(config, { health: { listen: '127.0.0.1:0' } }));
    bed.api.enqueue(SIM_SERVER_ID, { command: 'give Steve diamond 1' });
    porter = bed.spawnPorter();
    const listening = await porter.waitForEvent('health.listening');
    await waitFor(() => bed.api.commands().every((c) => c.status === 'EXECUTED') || porter.exit, { ...WAIT, what: 'a delivery' });
    assert.equal(porter.exit, undefined, porter.tail());
    const response = await fetch(`http://127.0.0.1:${String(listening.port)}/metrics`, { signal: AbortSignal.timeout(10_000) });
    scrape = await response.text();
  });

  after(async () => {
    await bed?.close();
  });

  test('promtool check rules accepts the alert rules', async () => {
    const result = await run('promtool', ['check', 'rules', repoPath(RULES)], { timeoutMs: 60_000 });
    assert.equal(result.code, 0, `${result.stdout}${result.stderr}`);
  });

  test('promtool test rules: every alert fires when it should and stays quiet when it should not', async () => {
    const result = await run('promtool', ['test', 'rules', repoPath(RULE_TESTS)], { timeoutMs: 60_000 });
    assert.equal(result.code, 0, `${result.stdout}${result.stderr}`);
  });

  test('promtool check metrics finds nothing wrong in a live scrape of porter', async () => {
    assert.match(scrape, /^porter_deliveries_total\{server="itest",outcome="done"\} 1$/m);
    const result = await run('promtool', ['check', 'metrics'], { input: scrape, timeoutMs: 60_000 });
    assert.equal(`${result.stdout}${result.stderr}`, '', 'promtool check metrics reported problems');
    assert.equal(result.code, 0);
  });

  test('every metric the alert rules and the dashboard read is in the scrape', async () => {
    const families = familiesOf(scrape);
    const expressions = [...(await ruleExpressions()), ...dashboardExpressions()];
    assert.ok(expressions.length >= 10, 'the rules and the dashboard were read');
    const missing = expressions.flatMap(metricsIn).filter((name) => !families.has(name));
    assert.deepEqual([...new Set(missing)], [], 'metrics queried but not exported');
  });

  test('the dashboard has a panel for each thing an operator watches', () => {
    const read = dashboardExpressions().flatMap(metricsIn);
    for (const metric of [
      'porter_deliveries_total',
      'porter_delivery_duration_seconds_bucket',
      'porter_budget_remaining',
      'porter_executor_connected',
      'porter_journal_backlog',
      'porter_rate_limited_total',
    ]) {
      assert.ok(read.includes(metric), `no panel reads ${metric}`);
    }
  });
});
