import { execFileSync } from 'node:child_process';
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';

/**
 * Which packages a fresh process has loaded after importing `modules` (compiled, from dist/src):
 * undici and the rest are CommonJS, so they show in the require cache even when imported from ESM.
 */
function packagesLoadedBy(modules: readonly string[]): string[] {
  const urls = modules.map((module) => new URL(`../../src/${module}`, import.meta.url).href);
  const script = `
    for (const url of ${JSON.stringify(urls)}) await import(url);
    const { createRequire } = await import('node:module');
    const names = Object.keys(createRequire(import.meta.url).cache).map((path) => /node_modules\\/((?:@[^/]+\\/)?[^/]+)/.exec(path)?.[1]);
    process.stdout.write(JSON.stringify([...new Set(names.filter(Boolean))].sort()));
  `;
  return JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' })) as string[];
}

describe('what reading a configuration loads', () => {
  test('the schema and the transport list load no HTTP client: undici comes with the first connection, not with the config', () => {
    // `porter history` reads a config and nothing else; undici costs it ~0.1 s of start-up.
    assert.ok(!packagesLoadedBy(['config/load.js', 'protocols/descriptors.js']).includes('undici'));
  });

  test('the check is able to see undici where it is loaded', () => {
    assert.ok(packagesLoadedBy(['api/client.js']).includes('undici'));
  });
});
