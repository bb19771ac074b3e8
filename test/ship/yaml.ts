import assert from 'node:assert/strict';
import { run } from './run.js';

/**
 * YAML is read with Debian's python3-yaml: porter has no YAML parser among its dependencies, and
 * the shipped YAML (Compose, Prometheus rules, Kubernetes manifests) only needs reading in tests.
 */
const PYTHON = '/usr/bin/python3';
const toJson = 'import json, sys, yaml; json.dump(list(yaml.safe_load_all(sys.stdin)), sys.stdout)';

/** Every document of a YAML stream, as JSON values. */
export async function loadYamlDocuments(text: string): Promise<unknown[]> {
  const result = await run(PYTHON, ['-c', toJson], { input: text, timeoutMs: 20_000 });
  assert.equal(result.code, 0, `python3-yaml could not read the YAML: ${result.stderr}`);
  return JSON.parse(result.stdout) as unknown[];
}

/** A single-document YAML file, as a JSON value. */
export async function loadYaml(text: string): Promise<unknown> {
  const documents = await loadYamlDocuments(text);
  assert.equal(documents.length, 1, 'expected one YAML document');
  return documents[0];
}

/** False when python3-yaml is there; else why the test is skipped (a failure in CI). */
export async function yamlMissing(): Promise<string | false> {
  const probe = await run(PYTHON, ['-c', 'import yaml'], { timeoutMs: 10_000 }).catch(() => ({ code: 1 }));
  const skip = probe.code === 0 ? false : 'Debian python3-yaml is not installed (apt-get install python3-yaml)';
  if (skip && process.env.PORTER_REQUIRE_SHIP_TOOLS === '1') throw new Error(`${skip}; CI requires it`);
  return skip;
}
