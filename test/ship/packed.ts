import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from './repo.js';
import { run } from './run.js';

/** npm install -g of a tarball resolves and copies the dependencies: slow on a loaded CI machine. */
const INSTALL_TIMEOUT_MS = 170_000;

/**
 * The package as a user gets it: `npm pack` of this tree into `work`, then `npm install -g
 * --prefix <prefix>` of that tarball. --ignore-scripts: `prepare` (tsc over the whole tree)
 * already ran for this test run, and running it again would rebuild dist/ under the other tests.
 */
export async function installPackedPorter(work: string, prefix: string): Promise<void> {
  const packed = await run('npm', ['pack', '--ignore-scripts', '--pack-destination', work], { cwd: repoRoot, timeoutMs: 60_000 });
  assert.equal(packed.code, 0, packed.stderr);
  const tarball = readdirSync(work).find((f) => f.endsWith('.tgz'));
  assert.ok(tarball, 'npm pack wrote a tarball');
  const installed = await run('npm', ['install', '-g', '--prefix', prefix, '--no-audit', '--no-fund', join(work, tarball)], {
    cwd: work,
    timeoutMs: INSTALL_TIMEOUT_MS,
  });
  assert.equal(installed.code, 0, `npm install -g failed:\n${installed.stderr}`);
}
