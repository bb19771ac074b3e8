// The npm package as published: packed from a staged folder whose package.json is the one users
// install, not the repository's. The repository's holds the scripts a clone needs (`prepare`
// builds on `npm ci`) and its devDependencies; an installed package needs neither, and npm 11
// warns on installing a tarball whose manifest has a `prepare` it will not run
// ("install scripts not yet covered by allowScripts"). Every runtime library is inside the
// bundle (scripts/bundle.mjs), so the published package depends on nothing.
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

/** The repository's manifest fields that an installed package keeps; scripts and dependencies go. */
const PUBLISHED_FIELDS = ['name', 'version', 'description', 'type', 'license', 'repository', 'homepage', 'bugs', 'bin', 'files', 'engines'];

export function publishedManifest(pkg) {
  return Object.fromEntries(PUBLISHED_FIELDS.filter((field) => pkg[field] !== undefined).map((field) => [field, pkg[field]]));
}

/** Packs the built tree (npm run build first) into `out`; returns the tarball's path. */
export function packNpm(out, pkg, root = '.') {
  const stage = join(root, 'dist', 'npm-package');
  rmSync(stage, { recursive: true, force: true });
  mkdirSync(stage, { recursive: true });
  for (const entry of [...pkg.files, 'README.md', 'LICENSE']) {
    const from = join(root, entry);
    if (existsSync(from)) cpSync(from, join(stage, entry), { recursive: true });
  }
  writeFileSync(join(stage, 'package.json'), `${JSON.stringify(publishedManifest(pkg), null, 2)}\n`);
  const [packed] = JSON.parse(
    execFileSync('npm', ['pack', '--json', '--pack-destination', resolve(out)], {
      cwd: stage,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
    }),
  );
  return join(out, packed.filename);
}
