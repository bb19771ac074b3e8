import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { repoPath } from './repo.js';

/**
 * What every `porter` command loads before it knows which command it runs: the bin's static
 * import graph. Libraries a command needs only once it has read a config (zod for the schema,
 * undici for the Seller API, prom-client for /metrics) are imported where they are used, or
 * `porter --help` and every start pay for loading them (start → first pull is a benchmark with a
 * target). A static import of the transport descriptors from a command's file once put zod's
 * 600 kB here and made `porter --help` ~60 ms slower.
 */
function staticClosure(bundleDir: string, entry: string): Map<string, string> {
  const files = new Map<string, string>();
  const pending = [entry];
  while (pending.length > 0) {
    const file = pending.pop()!;
    if (files.has(file)) continue;
    const text = readFileSync(join(bundleDir, file), 'utf8');
    files.set(file, text);
    // Static imports only: `import("./chunk.js")` is a dynamic import, loaded when it runs.
    for (const match of text.matchAll(/(?:from|import)\s*"\.\/([^"]+)"/g)) pending.push(match[1]!);
  }
  return files;
}

describe("the bin's start-up imports", () => {
  const bundleDir = repoPath('dist/bundle');
  const closure = staticClosure(bundleDir, 'porter.js');

  test('hold no zod, undici or prom-client: each is imported where it is used', () => {
    const markers = { zod: 'ZodObject', undici: 'UND_ERR_', 'prom-client': 'prom-client' };
    for (const [library, marker] of Object.entries(markers)) {
      const holders = [...closure].filter(([, text]) => text.includes(marker)).map(([file]) => file);
      assert.deepEqual(holders, [], `${library} is loaded at every start by ${holders.join(', ')}`);
    }
  });

  test('hold none of the demo: its scenarios and the simulators load when porter demo or porter sim runs', () => {
    const markers = {
      "the demo's scenarios": 'Thanks for supporting the server!',
      'the simulated Seller API': 'fake Seller API',
      'the RCON simulator': 'fake RCON server',
    };
    for (const [part, marker] of Object.entries(markers)) {
      const holders = [...closure].filter(([, text]) => text.includes(marker)).map(([file]) => file);
      assert.deepEqual(holders, [], `${part} is loaded at every start by ${holders.join(', ')}`);
    }
  });

  test('stay small', () => {
    const bytes = [...closure.values()].reduce((sum, text) => sum + text.length, 0);
    assert.ok(bytes < 250_000, `${bytes} bytes load before any command runs`);
  });
});
