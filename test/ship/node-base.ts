import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { podman } from './podman.js';
import { run } from './run.js';

/**
 * A stand-in for an official Debian-based node:*-slim image, made from Debian packages, since no
 * registry image can be pulled here: debootstrap's minimal Debian 13 (nodejs 20.19, which meets
 * porter's engines; ca-certificates; tini), npm added with apt-get inside it (debootstrap alone
 * cannot resolve npm's dependencies), and what an official node image has that a build may rely
 * on: the user and group `node`, 1000:1000, and node on PATH. It takes minutes, so the result is
 * kept as a tarball under /var/tmp named by a hash of this recipe, and imported from there when
 * podman has lost the image; the build runs under flock, so two test files wanting it at once make
 * it once. Run this file with node to make it by hand.
 */

const RECIPE = {
  suite: 'trixie',
  mirror: 'http://deb.debian.org/debian',
  include: ['nodejs', 'ca-certificates', 'tini'],
  thenInstall: ['npm'],
  user: { name: 'node', uid: 1000 },
  env: 'PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
  // Bump when a step below changes in a way the fields above do not show.
  steps: 1,
};

const KEY = createHash('sha256').update(JSON.stringify(RECIPE)).digest('hex').slice(0, 12);
export const NODE_BASE_IMAGE = `localhost/porter-test-node-base:${KEY}`;
const TARBALL = `/var/tmp/porter-test-node-base-${KEY}.tar`;
const LOCK = '/var/tmp/porter-test-node-base.lock';
/** debootstrap and apt-get on a loaded machine: minutes, bounded so a hung mirror fails the test. */
const STEP_MS = 900_000;

async function step(file: string, args: readonly string[]): Promise<void> {
  const result = await run(file, args, { timeoutMs: STEP_MS });
  if (result.code !== 0)
    throw new Error(`${file} ${args.join(' ')} exited ${result.code}:\n${(result.stdout + result.stderr).slice(-4000)}`);
}

async function imageExists(): Promise<boolean> {
  return (await podman(['image', 'exists', NODE_BASE_IMAGE], { allowFailure: true })).code === 0;
}

async function makeTarball(): Promise<void> {
  const root = mkdtempSync('/var/tmp/porter-test-node-base-');
  try {
    await step('debootstrap', ['--variant=minbase', `--include=${RECIPE.include.join(',')}`, RECIPE.suite, root, RECIPE.mirror]);
    await step('chroot', [root, 'apt-get', 'install', '-y', '--no-install-recommends', ...RECIPE.thenInstall]);
    const { name, uid } = RECIPE.user;
    await step('chroot', [root, 'useradd', '--uid', String(uid), '--user-group', '--create-home', '--shell', '/bin/bash', name]);
    const id = await run('chroot', [root, 'id', '-g', name]);
    if (id.stdout.trim() !== String(uid)) throw new Error(`group ${name} got gid ${id.stdout.trim()}, not ${uid}`);
    await step('chroot', [root, 'apt-get', 'clean']);
    rmSync(join(root, 'var/lib/apt/lists'), { recursive: true, force: true });
    await step('tar', ['-C', root, '-cf', `${TARBALL}.part`, '.']);
    renameSync(`${TARBALL}.part`, TARBALL);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

/** Under the lock: the image, from the cached tarball or made anew. */
async function makeBase(): Promise<void> {
  if (await imageExists()) return;
  if (!existsSync(TARBALL)) await makeTarball();
  await podman(['import', '--change', `ENV ${RECIPE.env}`, '--change', 'CMD ["node"]', TARBALL, NODE_BASE_IMAGE], { timeoutMs: STEP_MS });
}

/** The stand-in base image's name, made first when needed (by this file run under flock). */
export async function ensureNodeBase(): Promise<string> {
  if (await imageExists()) return NODE_BASE_IMAGE;
  const result = await run('flock', [LOCK, process.execPath, fileURLToPath(import.meta.url)], { timeoutMs: 3 * STEP_MS });
  if (result.code !== 0) throw new Error(`making the stand-in node base failed:\n${(result.stdout + result.stderr).slice(-4000)}`);
  return NODE_BASE_IMAGE;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await makeBase();
  process.stdout.write(`${NODE_BASE_IMAGE}\n`);
}
