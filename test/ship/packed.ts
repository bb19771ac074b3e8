import assert from 'node:assert/strict';
import { join, resolve } from 'node:path';
import { repoRoot } from './repo.js';
import { run } from './run.js';

/** npm install -g of a tarball on a loaded CI machine. */
const INSTALL_TIMEOUT_MS = 170_000;

/**
 * `npm run release`'s `parts` (scripts/release.mjs), made from this tree's build into `out`: what
 * a release publishes. --no-build: the build already ran for this test run, and running it again
 * would rebuild dist/ under the other tests. Resolves with the release script's output lines.
 */
export async function buildRelease(out: string, parts: readonly string[], timeoutMs = 600_000): Promise<string> {
  const made = await run(process.execPath, ['scripts/release.mjs', '--no-build', '--only', parts.join(','), '--out', out], {
    cwd: repoRoot,
    timeoutMs,
  });
  assert.equal(made.code, 0, made.stdout + made.stderr);
  return made.stdout;
}

/** The npm package of a release, made into `work`/release. Resolves with its path. */
export async function releaseTarball(work: string): Promise<string> {
  const stdout = await buildRelease(join(work, 'release'), ['npm'], 120_000);
  const line = /^release: npm package: (\S+)/m.exec(stdout);
  assert.ok(line, `the release build names its tarball:\n${stdout}`);
  return resolve(repoRoot, line[1]!);
}

/**
 * The package as a user gets it: the release's tarball, `npm install -g --prefix <prefix>`.
 * Resolves with what npm printed, which must hold no install-script warning.
 */
export async function installPackedPorter(work: string, prefix: string): Promise<string> {
  const tarball = await releaseTarball(work);
  const installed = await run('npm', ['install', '-g', '--prefix', prefix, '--no-audit', '--no-fund', tarball], {
    cwd: work,
    timeoutMs: INSTALL_TIMEOUT_MS,
  });
  assert.equal(installed.code, 0, `npm install -g failed:\n${installed.stderr}`);
  return installed.stdout + installed.stderr;
}
