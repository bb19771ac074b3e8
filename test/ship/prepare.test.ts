import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync, chmodSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { repoRoot } from './repo.js';
import { run } from './run.js';

/**
 * `prepare` runs after `npm ci` and again on every `npx porter …` in a clone: it rebuilds only when
 * a source is newer than the bundle, so npx never deletes dist/ under a porter running from it.
 * Tried in a scratch tree with an `npm` on PATH that only notes how it was called.
 */
describe('scripts/prepare.mjs', () => {
  const dir = mkdtempSync(join(tmpdir(), 'porter-prepare-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const bin = join(dir, 'bin');
  mkdirSync(bin);
  const calls = join(dir, 'npm-calls');
  writeFileSync(join(bin, 'npm'), `#!/bin/sh\necho "$@" >> ${JSON.stringify(calls)}\n`);
  chmodSync(join(bin, 'npm'), 0o755);
  mkdirSync(join(dir, 'src'));
  mkdirSync(join(dir, 'dist/bundle'), { recursive: true });
  writeFileSync(join(dir, 'src/main.ts'), 'export {};\n');
  writeFileSync(join(dir, 'dist/bundle/porter.js'), '// built\n');
  const prepare = () =>
    run(process.execPath, [join(repoRoot, 'scripts/prepare.mjs')], {
      cwd: dir,
      env: { ...process.env, PATH: `${bin}:${process.env.PATH ?? ''}` },
    });
  const setTimes = (path: string, seconds: number) => utimesSync(join(dir, path), seconds, seconds);

  test('a bundle newer than every source is left alone', async () => {
    setTimes('src/main.ts', 1_000_000);
    setTimes('src', 1_000_000);
    setTimes('dist/bundle/porter.js', 2_000_000);
    const result = await prepare();
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /is newer than its sources: not rebuilt/);
    assert.equal(existsSync(calls), false, 'npm run build was called');
  });

  test('a source newer than the bundle, or no bundle, builds', async () => {
    setTimes('src/main.ts', 3_000_000);
    assert.equal((await prepare()).code, 0);
    rmSync(join(dir, 'dist'), { recursive: true });
    assert.equal((await prepare()).code, 0);
    assert.deepEqual(readFileSync(calls, 'utf8').trim().split('\n'), ['run build', 'run build']);
  });
});
