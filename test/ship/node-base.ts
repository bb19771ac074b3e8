import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { podman } from './podman.js';
import { run } from './run.js';

/**
 * Base images made from Debian packages, since no registry image can be pulled here. `node`: a
 * stand-in for an official Debian-based node:*-slim image, made from Debian packages, since no
 * registry image can be pulled here: debootstrap's minimal Debian 13 (nodejs 20.19, which meets
 * porter's engines; ca-certificates; tini), npm added with apt-get inside it (debootstrap alone
 * cannot resolve npm's dependencies), and what an official node image has that a build may rely
 * on: the user and group `node`, 1000:1000, and node on PATH. It takes minutes, so the result is
 * kept as a tarball under /var/tmp named by a hash of this recipe, and imported from there when
 * podman has lost the image; the build runs under flock, so two test files wanting it at once make
 * it once. `bare`: the same Debian with no Node at all, where a single executable must run alone.
 * Run this file with node (and the kind) to make one by hand.
 */

interface Recipe {
  readonly name: string;
  readonly suite: string;
  readonly mirror: string;
  readonly include: readonly string[];
  readonly thenInstall: readonly string[];
  readonly user?: { readonly name: string; readonly uid: number };
  readonly env: string;
  readonly cmd: string;
  /** Bump when a step below changes in a way the fields above do not show. */
  readonly steps: number;
}

const PATH = 'PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

const RECIPES = {
  node: {
    name: 'porter-test-node-base',
    suite: 'trixie',
    mirror: 'http://deb.debian.org/debian',
    include: ['nodejs', 'ca-certificates', 'tini'],
    thenInstall: ['npm'],
    user: { name: 'node', uid: 1000 },
    env: PATH,
    cmd: '["node"]',
    steps: 1,
  },
  // A host with no Node at all, where an owner runs porter's single executable.
  bare: {
    name: 'porter-test-bare-base',
    suite: 'trixie',
    mirror: 'http://deb.debian.org/debian',
    include: ['ca-certificates'],
    thenInstall: [],
    env: PATH,
    cmd: '["/bin/bash"]',
    steps: 1,
  },
} satisfies Record<string, Recipe>;

export type BaseKind = keyof typeof RECIPES;

function names(kind: BaseKind): { image: string; tarball: string; lock: string } {
  const recipe: Recipe = RECIPES[kind];
  const key = createHash('sha256').update(JSON.stringify(recipe)).digest('hex').slice(0, 12);
  return { image: `localhost/${recipe.name}:${key}`, tarball: `/var/tmp/${recipe.name}-${key}.tar`, lock: `/var/tmp/${recipe.name}.lock` };
}

/** debootstrap and apt-get on a loaded machine: minutes, bounded so a hung mirror fails the test. */
const STEP_MS = 900_000;

async function step(file: string, args: readonly string[]): Promise<void> {
  const result = await run(file, args, { timeoutMs: STEP_MS });
  if (result.code !== 0)
    throw new Error(`${file} ${args.join(' ')} exited ${result.code}:\n${(result.stdout + result.stderr).slice(-4000)}`);
}

async function imageExists(kind: BaseKind): Promise<boolean> {
  return (await podman(['image', 'exists', names(kind).image], { allowFailure: true })).code === 0;
}

async function makeTarball(kind: BaseKind): Promise<void> {
  const recipe: Recipe = RECIPES[kind];
  const { tarball } = names(kind);
  const root = mkdtempSync(`/var/tmp/${recipe.name}-`);
  try {
    await step('debootstrap', ['--variant=minbase', `--include=${recipe.include.join(',')}`, recipe.suite, root, recipe.mirror]);
    if (recipe.thenInstall.length > 0)
      await step('chroot', [root, 'apt-get', 'install', '-y', '--no-install-recommends', ...recipe.thenInstall]);
    if (recipe.user) {
      const { name, uid } = recipe.user;
      await step('chroot', [root, 'useradd', '--uid', String(uid), '--user-group', '--create-home', '--shell', '/bin/bash', name]);
      const id = await run('chroot', [root, 'id', '-g', name]);
      if (id.stdout.trim() !== String(uid)) throw new Error(`group ${name} got gid ${id.stdout.trim()}, not ${uid}`);
    }
    await step('chroot', [root, 'apt-get', 'clean']);
    rmSync(join(root, 'var/lib/apt/lists'), { recursive: true, force: true });
    await step('tar', ['-C', root, '-cf', `${tarball}.part`, '.']);
    renameSync(`${tarball}.part`, tarball);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

/** Under the lock: the image, from the cached tarball or made anew. */
async function makeBase(kind: BaseKind): Promise<void> {
  if (await imageExists(kind)) return;
  const { image, tarball } = names(kind);
  if (!existsSync(tarball)) await makeTarball(kind);
  const recipe: Recipe = RECIPES[kind];
  await podman(['import', '--change', `ENV ${recipe.env}`, '--change', `CMD ${recipe.cmd}`, tarball, image], { timeoutMs: STEP_MS });
}

/** A base image's name, made first when needed (by this file run under flock, so two test files make it once). */
export async function ensureDebianBase(kind: BaseKind): Promise<string> {
  const { image, lock } = names(kind);
  if (await imageExists(kind)) return image;
  const result = await run('flock', [lock, process.execPath, fileURLToPath(import.meta.url), kind], { timeoutMs: 3 * STEP_MS });
  if (result.code !== 0) throw new Error(`making the ${kind} base image failed:\n${(result.stdout + result.stderr).slice(-4000)}`);
  return image;
}

/** The stand-in for node:*-slim. */
export function ensureNodeBase(): Promise<string> {
  return ensureDebianBase('node');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const kind = (process.argv[2] ?? 'node') as BaseKind;
  if (!(kind in RECIPES)) throw new Error(`unknown base ${kind}: one of ${Object.keys(RECIPES).join(', ')}`);
  await makeBase(kind);
  process.stdout.write(`${names(kind).image}\n`);
}
