// npm run release: every artifact of this version, built from this tree into release/
// (docs/contributing.md#releasing; the decisions: docs/design.md#releases; how owners use each:
// docs/install.md). Reaches no network but the npm registry, for the Node the executables ship.
// `--only npm,sea,oci,egg,sums` builds a part (the ship tests build what they prove); `--out DIR` writes
// elsewhere; `--no-build` uses the dist/ there is; `--oci-base IMAGE` builds the image on another
// base than the one made from Debian packages and SHIP_NODE (scripts/release/oci-base.mjs).
// PORTER_PODMAN_FLAGS adds flags this machine's podman needs to `podman build` (space-separated).
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { packNpm } from './release/npm-package.mjs';
import { writeEgg } from './release/egg.mjs';
import { writeSbom } from './release/sbom.mjs';
import { buildImageArchive } from './release/oci.mjs';
import { buildExecutables } from './release/sea.mjs';
import { writeSums } from './release/sums.mjs';

const PARTS = ['npm', 'sea', 'oci', 'egg', 'sums'];
const { values } = parseArgs({
  options: {
    out: { type: 'string', default: 'release' },
    only: { type: 'string' },
    'no-build': { type: 'boolean' },
    'oci-base': { type: 'string' },
  },
});
const parts = values.only ? values.only.split(',') : PARTS;
const unknown = parts.filter((part) => !PARTS.includes(part));
if (unknown.length > 0) throw new Error(`unknown part ${unknown.join(', ')}: choose from ${PARTS.join(', ')}`);

const pkg = JSON.parse(readFileSync('package.json', 'utf8'));
const out = values.out;
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
if (!values['no-build']) execFileSync('npm', ['run', 'build'], { stdio: 'inherit' });

const step = (name, fn) => {
  const started = Date.now();
  const written = fn();
  return Promise.resolve(written).then((paths) => {
    for (const path of [paths].flat()) console.log(`release: ${name}: ${path} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
  });
};
if (parts.includes('npm')) {
  await step('npm package', () => packNpm(out, pkg));
  await step('SBOM', () => writeSbom(out, pkg, 'dist/bundle-meta.json'));
}
if (parts.includes('sea')) await step('single executables', () => buildExecutables(out, pkg));
if (parts.includes('oci')) {
  const engineFlags = (process.env.PORTER_PODMAN_FLAGS ?? '').split(' ').filter(Boolean);
  await step('OCI image', () => buildImageArchive(out, pkg, { base: values['oci-base'], engineFlags }));
}
if (parts.includes('egg')) await step('egg', () => writeEgg(out, pkg));
if (parts.includes('sums')) await step('sums', () => writeSums(out));
