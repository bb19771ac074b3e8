import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ENGINE_FLAGS, podman } from './podman.js';
import { repoRoot } from './repo.js';
import { run } from './run.js';

/**
 * The porter image as a release ships it: the OCI archive `npm run release` writes
 * (scripts/release/oci.mjs: the repository's Dockerfile built by podman on the release base, node
 * SHIP_NODE), loaded with `podman load` as an owner loads it, then tagged for the tests. The build
 * hands in this machine's npm settings as the build secret `npmrc` (never a layer), and this
 * machine's podman flags through PORTER_PODMAN_FLAGS. Builds run one at a time (flock): the second
 * test file to ask gets podman's layer cache.
 */

export const PORTER_IMAGE = 'localhost/porter:ship-test';
const LOCK = '/var/tmp/porter-test-image.lock';
const BUILD_MS = 900_000;

export interface BuiltImage {
  readonly name: string;
  /** The name `podman load` gave it, from the archive's index (the release's image name and version). */
  readonly loadedAs: string;
  /** How long the release's OCI step took this time (layer cache included). */
  readonly buildMs: number;
  /** The archive's size in bytes. */
  readonly archiveBytes: number;
}

/** The release's OCI archive, built into a scratch folder and loaded; returns the image's names. */
export async function buildPorterImage(): Promise<BuiltImage> {
  const out = mkdtempSync(join(tmpdir(), 'porter-release-oci-'));
  try {
    const started = performance.now();
    const result = await run(
      'flock',
      [LOCK, process.execPath, join(repoRoot, 'scripts/release.mjs'), '--only', 'oci', '--out', out, '--no-build'],
      {
        cwd: repoRoot,
        timeoutMs: BUILD_MS,
        env: { ...process.env, DISABLE_HC_SYSTEMD: 'true', PORTER_PODMAN_FLAGS: ENGINE_FLAGS.join(' ') },
      },
    );
    const buildMs = performance.now() - started;
    if (result.code !== 0)
      throw new Error(`the release's OCI step failed (${result.code}):\n${(result.stdout + result.stderr).slice(-6000)}`);
    const archive = readdirSync(out).find((name) => name.endsWith('-oci.tar'));
    if (!archive) throw new Error(`the release's OCI step wrote no *-oci.tar into ${out}: ${readdirSync(out).join(', ')}`);
    const archiveBytes = statSync(join(out, archive)).size;
    const loaded = await podman(['load', '-q', '-i', join(out, archive)], { timeoutMs: BUILD_MS });
    const loadedAs = /Loaded image(?:\(s\))?: (\S+)/.exec(loaded.stdout + loaded.stderr)?.[1];
    if (!loadedAs) throw new Error(`podman load named no image:\n${loaded.stdout}${loaded.stderr}`);
    await podman(['tag', loadedAs, PORTER_IMAGE]);
    return { name: PORTER_IMAGE, loadedAs, buildMs, archiveBytes };
  } finally {
    rmSync(out, { recursive: true, force: true });
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
// build on a machine (minutes: the release base, npm ci in the image) is not counted against the
// time limit of the test file that happens to ask for it first.
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { buildMs, loadedAs } = await buildPorterImage();
  process.stdout.write(`${PORTER_IMAGE}, loaded as ${loadedAs} (${(buildMs / 1000).toFixed(0)} s)\n`);
}
