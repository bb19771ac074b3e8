// npm runs `prepare` after `npm ci`, and again each time `npx porter …` runs porter from this
// folder (npx installs the folder, and that runs its `prepare`). A full build there deleted dist/
// under a porter already running from it, and made every `npx porter` wait for tsc. So: build
// only when something the build reads is newer than the bundle it ends with.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const BUNDLE = 'dist/bundle/porter.js';
const INPUTS = ['src', 'test', 'bench', 'scripts', 'tsconfig.json', 'package.json', 'package-lock.json'];

function newestMtime(path) {
  let stat;
  try {
    stat = statSync(path);
  } catch {
    return 0;
  }
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = stat.mtimeMs;
  for (const name of readdirSync(path)) newest = Math.max(newest, newestMtime(join(path, name)));
  return newest;
}

let built;
try {
  built = statSync(BUNDLE).mtimeMs;
} catch {
  built = undefined;
}
if (built !== undefined && Math.max(...INPUTS.map(newestMtime)) <= built) {
  console.log(`porter: ${BUNDLE} is newer than its sources: not rebuilt (npm run build forces it)`);
} else {
  const result = spawnSync(process.platform === 'win32' ? 'npm.cmd' : 'npm', ['run', 'build'], { stdio: 'inherit' });
  process.exitCode = result.status ?? 1;
}
