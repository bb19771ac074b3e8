// porter-<version>-oci.tar: the image as an OCI archive (`podman load -i`, `docker load -i`),
// built by podman from the repository's Dockerfile on the release base (oci-base.mjs: the Node the
// single executables ship) or on `--oci-base IMAGE`. npm inside the build uses this machine's
// registry settings, handed in as the build secret `npmrc` the Dockerfile mounts for its npm ci
// (and the CA file they name mounted read-only for the build), so no registry address or
// credential lands in a layer. The OCI image format has no HEALTHCHECK (the image spec's config
// has no such field, and podman drops it on save): docs/install.md#container gives the check as
// run flags, and the Compose example carries it.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureReleaseBase } from './oci-base.mjs';
import { imageName, repositoryUrl } from './urls.mjs';

const sh = (file, args, options = {}) => execFileSync(file, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], ...options });

function npmConfig(key) {
  const value = sh('npm', ['config', 'get', key]).trim();
  return value === '' || value === 'null' || value === 'undefined' ? undefined : value;
}

/** The build's view of this machine's npm: its registry and the CA file it trusts (mounted at the same path). */
function registrySettings(dir) {
  const registry = npmConfig('registry');
  const cafile = npmConfig('cafile');
  const trusted = cafile && existsSync(cafile) ? cafile : undefined;
  const npmrc = join(dir, 'npmrc');
  writeFileSync(npmrc, [registry && `registry=${registry}`, trusted && `cafile=${trusted}`].filter(Boolean).join('\n') + '\n', {
    mode: 0o600,
  });
  return ['--secret', `id=npmrc,src=${npmrc}`, ...(trusted ? ['-v', `${trusted}:${trusted}:ro`] : [])];
}

function revision() {
  try {
    return sh('git', ['rev-parse', 'HEAD'], { stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return 'unknown';
  }
}

/**
 * Builds the image and writes it to `out` as an OCI archive; returns the archive's path.
 * `engineFlags`: what this machine's podman needs besides (PORTER_PODMAN_FLAGS, space-separated:
 * e.g. a runtime or limits, docs/contributing.md#releasing).
 */
export function buildImageArchive(out, pkg, { base, engineFlags = [] } = {}) {
  const from = base ?? ensureReleaseBase();
  const tag = `${imageName(pkg)}:${pkg.version}`;
  const dir = mkdtempSync(join(tmpdir(), 'porter-oci-'));
  try {
    sh(
      'podman',
      [
        'build',
        ...engineFlags,
        // Docker's format keeps the HEALTHCHECK in the local image; the archive is OCI.
        '--format',
        'docker',
        '--network',
        'host',
        ...registrySettings(dir),
        '--build-arg',
        `NODE_IMAGE=${from}`,
        '--build-arg',
        `PORTER_VERSION=${pkg.version}`,
        '--build-arg',
        `PORTER_REVISION=${revision()}`,
        '--build-arg',
        `PORTER_SOURCE=${repositoryUrl(pkg)}`,
        '-t',
        tag,
        '.',
      ],
      { stdio: ['ignore', 'ignore', 'inherit'], env: { ...process.env, DISABLE_HC_SYSTEMD: 'true' } },
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const archive = join(out, `porter-${pkg.version}-oci.tar`);
  rmSync(archive, { force: true });
  sh('podman', ['save', '--format', 'oci-archive', '-o', archive, tag], { stdio: ['ignore', 'ignore', 'inherit'] });
  return archive;
}
