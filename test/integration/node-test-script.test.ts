import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { scratchDirs } from '../helpers/scratch-dirs.js';

/**
 * The tiers' `node --test` runs (npm test, test:integration, test:ship) go through
 * scripts/node-test.mjs, which hands Node the test files under each folder. `node --test <folder>`
 * ran every .js file under it on Node 20, helpers too, and failed at once on Node 22 and 24
 * ("Could not find …/dist/test/integration"), so the suite could not run on the Node the image ships.
 */
const root = fileURLToPath(new URL('../../../', import.meta.url));
const script = join(root, 'scripts/node-test.mjs');
const scratch = scratchDirs('porter-node-test-', 'each');

/** A test file that notes its name in `ran` when its one test runs, and passes or fails. */
const testFile = (ran: string, name: string, passes = true) =>
  `import { appendFileSync } from 'node:fs';\nimport { test } from 'node:test';\n` +
  `test(${JSON.stringify(name)}, () => { appendFileSync(${JSON.stringify(ran)}, ${JSON.stringify(`${name}\n`)}); ` +
  `if (!${passes}) throw new Error('fails on purpose'); });\n`;

function nodeTest(cwd: string, args: string[]): Promise<{ code: number; output: string }> {
  // Without it, the runner inside would take itself for a part of this test's run and run no file.
  const { NODE_TEST_CONTEXT: _inside, ...env } = process.env;
  return new Promise((resolve) =>
    execFile(process.execPath, [script, ...args], { cwd, env, timeout: 120_000 }, (error, stdout, stderr) =>
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, output: stdout + stderr }),
    ),
  );
}

/** dist/test/ as tsc leaves it: test files in nested folders, and a helper beside them. */
function tier(dir: string, ran: string, failing?: string) {
  mkdirSync(join(dir, 'dist/test/deeper'), { recursive: true });
  writeFileSync(join(dir, 'package.json'), '{ "type": "module" }\n');
  writeFileSync(join(dir, 'dist/test/a.test.js'), testFile(ran, 'a'));
  writeFileSync(join(dir, 'dist/test/deeper/b.test.js'), testFile(ran, 'b', failing !== 'b'));
  writeFileSync(
    join(dir, 'dist/test/helper.js'),
    `import { appendFileSync } from 'node:fs';\nappendFileSync(${JSON.stringify(ran)}, 'helper\\n');\n`,
  );
}

const ranNames = (ran: string) => (existsSync(ran) ? readFileSync(ran, 'utf8').trim().split('\n').sort() : []);

describe('scripts/node-test.mjs, on the Node that runs this test', () => {
  test('a folder runs the *.test.js files under it, at any depth, and not the helpers beside them', async () => {
    const dir = scratch();
    const ran = join(dir, 'ran');
    tier(dir, ran);
    const result = await nodeTest(dir, ['--test-concurrency=2', '--test-timeout=60000', 'dist/test/']);
    assert.equal(result.code, 0, result.output);
    assert.deepEqual(ranNames(ran), ['a', 'b'], result.output);
  });

  test('a failing test fails the run; a folder with no test file is refused with its name', async () => {
    const dir = scratch();
    const ran = join(dir, 'ran');
    tier(dir, ran, 'b');
    const failed = await nodeTest(dir, ['dist/test']);
    assert.equal(failed.code, 1, failed.output);
    assert.deepEqual(ranNames(ran), ['a', 'b'], failed.output);

    mkdirSync(join(dir, 'empty'));
    const empty = await nodeTest(dir, ['dist/test', 'empty/']);
    assert.equal(empty.code, 64, empty.output);
    assert.match(empty.output, /no \*\.test\.js file under empty\/: build first/);
  });

  test('every test script in package.json hands node --test files through it, never a folder', () => {
    const scripts = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
    for (const name of ['test', 'test:integration', 'test:ship']) {
      assert.match(scripts[name]!, /node scripts\/node-test\.mjs /, name);
    }
    for (const [name, command] of Object.entries(scripts)) {
      assert.doesNotMatch(command, /node --test\b/, `${name} runs node --test itself: folders fail on Node 22 and later`);
    }
  });
});
