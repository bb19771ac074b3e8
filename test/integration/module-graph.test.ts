import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';

const SRC = new URL('../../src/', import.meta.url);
/** The repository, whose node_modules the child resolves packages from (pino). */
const REPO = fileURLToPath(new URL('../../../', import.meta.url));

/** Records every module the ES loader loads, one URL a line, in the file it is given (hooks run on their own thread). */
const RECORDER = `
  import { appendFileSync } from 'node:fs';
  let file;
  export function initialize(data) { file = data; }
  export async function load(url, context, next) { appendFileSync(file, url + '\\n'); return next(url, context); }
`;

interface Loaded {
  /** npm packages: undici and the rest are CommonJS, so they show in the require cache even when imported from ESM. */
  readonly packages: string[];
  /** porter's own modules, as paths under dist/src ("protocols/rcon/executor.js"). */
  readonly modules: string[];
}

/** What a fresh process has loaded after running `body` (an ES module's text) with the recorder in place. */
function loadedAfter(body: string): Loaded {
  const dir = mkdtempSync(join(tmpdir(), 'porter-module-graph-'));
  const record = join(dir, 'loaded.txt');
  const script = `
    const { register, createRequire } = await import('node:module');
    register('data:text/javascript,' + encodeURIComponent(${JSON.stringify(RECORDER)}), { data: ${JSON.stringify(record)} });
    ${body}
    const names = Object.keys(createRequire(import.meta.url).cache).map((path) => /node_modules\\/((?:@[^/]+\\/)?[^/]+)/.exec(path)?.[1]);
    process.stdout.write(JSON.stringify([...new Set(names.filter(Boolean))].sort()));
  `;
  try {
    const packages = JSON.parse(
      execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', cwd: REPO }),
    ) as string[];
    const modules = readFileSync(record, 'utf8')
      .split('\n')
      .filter((url) => url.startsWith(SRC.href))
      .map((url) => url.slice(SRC.href.length));
    return { packages, modules: [...new Set(modules)].sort() };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A module's text that imports porter's modules (paths under dist/src). */
const importing = (modules: readonly string[]) =>
  modules.map((module) => `await import(${JSON.stringify(new URL(module, SRC).href)});`).join('\n');

/** Every module of config/ and the transport list: what any command that reads a config may load. */
const CONFIG_SIDE = [
  ...readdirSync(fileURLToPath(new URL('config/', SRC)))
    .filter((file) => file.endsWith('.js'))
    .map((file) => `config/${file}`),
  'protocols/transport-registry.js',
];

/** What a transport's config needs: its descriptor, the descriptors' helpers and their list; never its runtime. */
const DESCRIPTOR = /^protocols\/(transport-descriptor|transport-registry|[^/]+\/descriptor)\.js$/;

describe('what reading a configuration loads', () => {
  const config = loadedAfter(importing(CONFIG_SIDE));

  test('the schema and the transport list load no HTTP client: undici comes with the first connection, not with the config', () => {
    // `porter history` reads a config and nothing else; undici costs it ~0.1 s of start-up.
    assert.ok(!config.packages.includes('undici'));
  });

  test('of the transports, only their descriptors: no executor is loaded before a server of its type is built', () => {
    const runtime = config.modules.filter((module) => module.startsWith('protocols/') && !DESCRIPTOR.test(module));
    assert.deepEqual(runtime, [], `reading a config loads ${runtime.join(', ')}`);
    assert.ok(config.modules.includes('protocols/rcon/descriptor.js'), 'the check sees the descriptors it allows');
  });

  test("building a server's executor loads its own transport's and no other", () => {
    const section = { type: 'script', exec: ['/bin/true'], timeoutMs: 1000 };
    const built = loadedAfter(`
      const [{ createExecutor }, { systemClock }, { pino }] = await Promise.all([
        import(${JSON.stringify(new URL('protocols/executor-registry.js', SRC).href)}),
        import(${JSON.stringify(new URL('clock.js', SRC).href)}),
        import('pino'),
      ]);
      await (await createExecutor(${JSON.stringify(section)}, { logger: pino({ level: 'silent' }), clock: systemClock })).close();
    `);
    const executors = built.modules.filter((module) => /^protocols\/[^/]+\/executor\.js$/.test(module));
    assert.deepEqual(executors, ['protocols/script/executor.js']);
  });

  test('the check is able to see undici where it is loaded', () => {
    assert.ok(loadedAfter(importing(['api/wire/client.js'])).packages.includes('undici'));
  });
});
