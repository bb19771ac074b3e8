import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { TRANSPORTS } from '../../src/protocols/transport-registry.js';
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

/** Every chunk `entry` may load, at start or later: its static imports and its `import("./chunk.js")` calls. */
function reachableFrom(bundleDir: string, entry: string): Set<string> {
  const files = new Set<string>();
  const pending = [entry];
  while (pending.length > 0) {
    const file = pending.pop()!;
    if (files.has(file)) continue;
    files.add(file);
    const text = readFileSync(join(bundleDir, file), 'utf8');
    for (const match of text.matchAll(/(?:from|import)\s*\(?"\.\/([^"]+)"/g)) pending.push(match[1]!);
  }
  return files;
}

/** The executor classes a chunk defines (LinkedExecutor, the base of the connection transports, among them). */
function executorClasses(text: string): string[] {
  return [...text.matchAll(/\b(?:var|class) (\w+Executor)\b/g)].map((match) => match[1]!);
}

/** What marks undici's code in a chunk: its error codes. */
const UNDICI_MARKER = 'UND_ERR_';

describe("the bin's start-up imports", () => {
  const bundleDir = repoPath('dist/bundle');
  const closure = staticClosure(bundleDir, 'porter.js');

  test('hold no zod, undici or prom-client: each is imported where it is used', () => {
    const markers = { zod: 'ZodObject', undici: UNDICI_MARKER, 'prom-client': 'prom-client' };
    for (const [library, marker] of Object.entries(markers)) {
      const holders = [...closure].filter(([, text]) => text.includes(marker)).map(([file]) => file);
      assert.deepEqual(holders, [], `${library} is loaded at every start by ${holders.join(', ')}`);
    }
  });

  test('hold none of the demo: its game starters and the simulators load when porter demo or porter sim runs', () => {
    const markers = {
      // The code that starts a game's demo: each scenario itself is a few strings in its game's
      // record (src/games/<id>.ts), which the registry holds and porter demo's --game choices read.
      "the demo's game starters": 'function demoServer(',
      'the simulated Seller API': 'fake Seller API',
      'the RCON simulator': 'fake RCON server',
    };
    const everyChunk = readdirSync(bundleDir).filter((file) => file.endsWith('.js'));
    for (const [part, marker] of Object.entries(markers)) {
      // A marker nothing in the bundle holds any more would pass for nothing.
      assert.ok(
        everyChunk.some((file) => readFileSync(join(bundleDir, file), 'utf8').includes(marker)),
        `no chunk holds ${JSON.stringify(marker)}: mark ${part} by a text it has`,
      );
      const holders = [...closure].filter(([, text]) => text.includes(marker)).map(([file]) => file);
      assert.deepEqual(holders, [], `${part} is loaded at every start by ${holders.join(', ')}`);
    }
  });

  test('stay small', () => {
    const bytes = [...closure.values()].reduce((sum, text) => sum + text.length, 0);
    assert.ok(bytes < 250_000, `${bytes} bytes load before any command runs`);
  });
});

/**
 * Each transport's executor is imported when a server of its type is built
 * (src/protocols/executor-registry.ts), never with the config: the bundle makes every one a chunk of its
 * own (named after its file, executor.ts), which no chunk imports statically.
 */
describe("the bundle's executors", () => {
  const bundleDir = repoPath('dist/bundle');
  // The chunks the bin can load at all: an earlier build's leftovers in the folder are not the bundle.
  const files = [...reachableFrom(bundleDir, 'porter.js')];
  const executorChunks = files.filter((file) => /^executor-[A-Z0-9]+\.js$/.test(file));
  const staticImports = (file: string) =>
    [...readFileSync(join(bundleDir, file), 'utf8').matchAll(/(?:from|import)\s*"\.\/([^"]+)"/g)].map((match) => match[1]!);

  test('are one chunk per transport, each holding one executor class', () => {
    assert.equal(executorChunks.length, TRANSPORTS.length, `executor chunks: ${executorChunks.join(', ')}`);
    const classes = executorChunks.map((file) => {
      const defined = executorClasses(readFileSync(join(bundleDir, file), 'utf8'));
      assert.equal(defined.length, 1, `${file} defines ${defined.join(', ') || 'no executor'}`);
      return defined[0]!;
    });
    assert.equal(new Set(classes).size, classes.length, `one class per chunk: ${classes.join(', ')}`);
  });

  test('are imported by no chunk statically: only when a server of their type is built', () => {
    const holders = files.filter((file) => staticImports(file).some((imported) => executorChunks.includes(imported)));
    assert.deepEqual(holders, []);
  });

  test('are not loaded by reading a config, nor is an HTTP client', () => {
    // The entry chunk of config/load.ts, which every command that reads a config imports (named after its file).
    const loaders = files.filter(
      (file) => /^load-[A-Z0-9]+\.js$/.test(file) && /export\{[^}]*\bloadConfig\b/.test(readFileSync(join(bundleDir, file), 'utf8')),
    );
    assert.equal(loaders.length, 1, `the chunk of config/load.ts: ${loaders.join(', ')}`);
    const closure = staticClosure(bundleDir, loaders[0]!);
    const executors = [...closure].filter(([file, text]) => executorChunks.includes(file) || executorClasses(text).length > 0);
    assert.deepEqual(
      executors.map(([file, text]) => `${file} (${executorClasses(text).join(', ')})`),
      [],
      'reading a config loads executor code',
    );
    const undici = [...closure].filter(([, text]) => text.includes(UNDICI_MARKER)).map(([file]) => file);
    assert.deepEqual(undici, [], `reading a config loads undici with ${undici.join(', ')}`);
  });
});
