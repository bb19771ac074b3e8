// The build of the quick loops (npm run test:unit, test:integration, test:ship): tsc into dist/
// with --incremental, so a one-file change recompiles and re-checks that file and what depends on
// it (seconds) instead of the whole tree (`npm run build`: ~40 s on 2 cores). Its build info is
// kept outside dist/ (node_modules/.cache/porter/), where `npm run build`'s delete of dist/ does
// not throw it away: that build leaves dist/ complete and current, so the next quick build goes on
// from its own last state and re-emits only what changed since.
//
// tsc trusts its build info, not dist/: an output deleted since (dist/ removed, a build cut short)
// is not written again, and the output of a deleted or moved source stays behind (node --test
// would still run a moved test from its old place). So after tsc: outputs without a source are
// removed, and if any source has no output, tsc runs again from nothing.
//
// --bundle also makes dist/bundle/ (what the integration and ship tests spawn), from a clean folder.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

const BUILD_INFO = 'node_modules/.cache/porter/tsc.tsbuildinfo';
/** The folders tsconfig.json compiles (its `include`), each emitted to dist/<folder>/. */
const ROOTS = ['src', 'test', 'bench'];

const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');

function compile() {
  const args = [tsc, '-p', 'tsconfig.json', '--incremental', '--tsBuildInfoFile', BUILD_INFO];
  const result = spawnSync(process.execPath, args, { stdio: 'inherit' });
  if (result.status !== 0) process.exit(result.status ?? 1);
}

function* files(dir) {
  if (!existsSync(dir)) return;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* files(path);
    else yield path;
  }
}

/** Removes the folders under `dir` that pruning left empty (a moved test area). */
function removeEmptyFolders(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (!entry.isDirectory()) continue;
    const path = join(dir, entry.name);
    removeEmptyFolders(path);
    if (readdirSync(path).length === 0) rmSync(path, { recursive: true });
  }
}

const isSource = (path) => path.endsWith('.ts') && !path.endsWith('.d.ts');
const outputOf = (source) => join('dist', source.replace(/\.ts$/, '.js'));
const sourceOf = (output) => output.slice('dist/'.length).replace(/\.js(\.map)?$/, '.ts');

/** Removes what tsc wrote for a source that is gone; answers whether every source has its output. */
function reconcile() {
  for (const root of ROOTS) {
    for (const output of files(join('dist', root))) {
      if (/\.js(\.map)?$/.test(output) && !existsSync(sourceOf(output))) rmSync(output);
    }
    if (existsSync(join('dist', root))) removeEmptyFolders(join('dist', root));
  }
  return ROOTS.every((root) => [...files(root)].filter(isSource).every((source) => existsSync(outputOf(source))));
}

compile();
if (!reconcile()) {
  console.log('build-quick: dist/ lacks outputs its build info says were written: compiling everything again');
  rmSync(BUILD_INFO, { force: true });
  compile();
}
if (process.argv.includes('--bundle')) {
  rmSync('dist/bundle', { recursive: true, force: true });
  const result = spawnSync(process.execPath, ['scripts/bundle.mjs'], { stdio: 'inherit' });
  if (result.status !== 0) process.exit(result.status ?? 1);
}
