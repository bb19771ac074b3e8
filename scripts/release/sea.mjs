// The single executables: porter and the Node it ships with in one file per architecture
// (Node's single-executable applications, nodejs.org/api/single-executable-applications.html).
// The blob is made by the shipped Node itself, without a code cache or a snapshot, so one blob
// serves both architectures; postject puts it into a copy of each architecture's node.
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';
import postject from 'postject';
import { ARCHES, shipNode } from './ship-node.mjs';

// The fuse Node looks for to know it carries a blob (the docs' postject line).
const SEA_FUSE = 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2';

/** The node flags of the bin's shebang (src/cli/main.ts says why each), so the executable runs as the daemon does. */
export function daemonFlags() {
  const shebang = readFileSync('dist/bundle/porter.js', 'utf8').split('\n', 1)[0];
  const match = /^#!\/usr\/bin\/env -S node((?: --[\w-]+(?:=\S+)?)*)$/.exec(shebang);
  if (!match) throw new Error(`dist/bundle/porter.js starts with an unexpected line: ${shebang}`);
  return match[1].trim().split(' ').filter(Boolean);
}

/** One CommonJS file with every dependency inside: what a single executable can run. */
async function bundleOneFile(work) {
  const outfile = join(work, 'porter.cjs');
  await build({
    entryPoints: ['dist/src/cli/main.js'],
    outfile,
    bundle: true,
    format: 'cjs',
    platform: 'node',
    target: 'node24',
    logLevel: 'warning',
    legalComments: 'none',
    minifyWhitespace: true,
    // import.meta exists only in ES modules; porter reads it only to find files beside itself,
    // which a single executable answers from its assets instead (src/package-files.ts).
    define: { 'import.meta.url': '__porterModuleUrl' },
    banner: { js: "const __porterModuleUrl = require('node:url').pathToFileURL(__filename).href;" },
  });
  return outfile;
}

/** The package files porter reads at run time, carried as assets (src/package-files.ts). */
function assets(work, pkg) {
  const manifest = join(work, 'package.json');
  const { name, version, repository, homepage } = pkg;
  writeFileSync(manifest, `${JSON.stringify({ name, version, repository, homepage }, null, 2)}\n`);
  return { 'package.json': manifest, 'config.schema.json': 'config.schema.json', 'systemd/porter.service': 'systemd/porter.service' };
}

/** Writes porter-<version>-linux-<arch> for each shipped architecture into `out`; returns their paths. */
export async function buildExecutables(out, pkg) {
  // A folder of this build's own: the ship tests build releases in parallel from one tree.
  mkdirSync('dist', { recursive: true });
  const work = mkdtempSync(join('dist', 'sea-'));
  const main = await bundleOneFile(work);
  const blob = join(work, 'porter.blob');
  const config = join(work, 'sea-config.json');
  writeFileSync(
    config,
    JSON.stringify({
      main,
      output: blob,
      disableExperimentalSEAWarning: true,
      useSnapshot: false,
      useCodeCache: false,
      execArgv: daemonFlags(),
      assets: assets(work, pkg),
    }),
  );
  execFileSync(shipNode('x64'), ['--experimental-sea-config', config], { stdio: ['ignore', 'ignore', 'inherit'] });
  const written = [];
  for (const arch of ARCHES) {
    const target = join(out, `porter-${pkg.version}-linux-${arch}`);
    copyFileSync(shipNode(arch), target);
    await postject.inject(target, 'NODE_SEA_BLOB', readFileSync(blob), { sentinelFuse: SEA_FUSE });
    written.push(target);
  }
  rmSync(work, { recursive: true, force: true });
  return written;
}
