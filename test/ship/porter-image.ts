import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureNodeBase } from './node-base.js';
import { BUILD_FLAGS, podman } from './podman.js';
import { repoRoot } from './repo.js';
import { run } from './run.js';

/**
 * The porter image, built from the repository's own Dockerfile on the stand-in Debian node base
 * (node-base.ts), the way docs/install.md#container tells an owner to build it: npm's registry
 * settings of this machine handed in as the build secret `npmrc`, and the CA file they name
 * bind-mounted read-only for the build only, so neither ends up in a layer. Builds run one at a
 * time (flock): the second test file to ask gets podman's layer cache.
 */

export const PORTER_IMAGE = 'localhost/porter:ship-test';
const LOCK = '/var/tmp/porter-test-image.lock';
const BUILD_MS = 900_000;

export interface BuiltImage {
  readonly name: string;
  readonly base: string;
  /** How long `podman build` took this time (layer cache included). */
  readonly buildMs: number;
}

async function npmConfig(key: string): Promise<string | undefined> {
  const result = await run('npm', ['config', 'get', key], { timeoutMs: 30_000 });
  const value = result.stdout.trim();
  return result.code === 0 && value !== '' && value !== 'null' && value !== 'undefined' ? value : undefined;
}

/** The build's view of this machine's npm: its registry, and the CA file it trusts (mounted at the same path). */
async function registrySettings(dir: string): Promise<{ secret: string[]; mounts: string[] }> {
  const registry = await npmConfig('registry');
  const cafile = await npmConfig('cafile');
  const lines = [registry ? `registry=${registry}` : '', cafile && existsSync(cafile) ? `cafile=${cafile}` : ''].filter(Boolean);
  const npmrc = join(dir, 'npmrc');
  writeFileSync(npmrc, `${lines.join('\n')}\n`, { mode: 0o600 });
  const mounts = cafile && existsSync(cafile) ? ['-v', `${cafile}:${cafile}:ro`] : [];
  return { secret: ['--secret', `id=npmrc,src=${npmrc}`], mounts };
}

/** Builds (or finds in the layer cache) porter's image on the stand-in base. */
export async function buildPorterImage(): Promise<BuiltImage> {
  const base = await ensureNodeBase();
  const dir = mkdtempSync(join(tmpdir(), 'porter-image-'));
  try {
    const { secret, mounts } = await registrySettings(dir);
    const revision = await run('git', ['rev-parse', 'HEAD'], { cwd: repoRoot, timeoutMs: 10_000 });
    const args = [
      'build',
      ...BUILD_FLAGS,
      ...secret,
      ...mounts,
      '--build-arg',
      `NODE_IMAGE=${base}`,
      '--build-arg',
      `PORTER_REVISION=${revision.code === 0 ? revision.stdout.trim() : 'unknown'}`,
      '-t',
      PORTER_IMAGE,
      repoRoot,
    ];
    const started = performance.now();
    const result = await run('flock', [LOCK, 'podman', ...args], {
      timeoutMs: BUILD_MS,
      env: { ...process.env, DISABLE_HC_SYSTEMD: 'true' },
    });
    const buildMs = performance.now() - started;
    if (result.code !== 0) throw new Error(`podman build failed (${result.code}):\n${(result.stdout + result.stderr).slice(-6000)}`);
    return { name: PORTER_IMAGE, base, buildMs };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The image's size in bytes, as podman reports it (base layers included). */
export async function imageSize(name: string): Promise<number> {
  const result = await podman(['image', 'inspect', '--format', '{{.Size}}', name]);
  return Number(result.stdout.trim());
}

/** A label of the image. */
export async function imageLabel(name: string, label: string): Promise<string> {
  const result = await podman(['image', 'inspect', '--format', `{{index .Labels "${label}"}}`, name]);
  return result.stdout.trim();
}

// `node dist/test/ship/porter-image.js`: builds it ahead of the tests (.ci/run does), so a first
// build on a machine (minutes: the node base, npm ci in the image) is not counted against the
// time limit of the test file that happens to ask for it first.
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { buildMs } = await buildPorterImage();
  process.stdout.write(`${PORTER_IMAGE} (${(buildMs / 1000).toFixed(0)} s)\n`);
}
