import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { getAsset, isSea } from 'node:sea';

/** The npm package's name (package.json); `porter` is another project's on the public registry. */
const PACKAGE_NAME = 'porter-connector';

/**
 * The files of porter's own package (package.json, config.schema.json, systemd/porter.service),
 * wherever this porter came from: a clone or an npm install keeps them beside the bundle, a
 * single executable (docs/install.md#the-single-executable-no-nodejs-needed) carries them inside as assets, since it
 * is one file with nothing beside it. Undefined when the file is not there.
 */
export function packageText(name: string): string | undefined {
  if (isSea()) {
    try {
      return getAsset(name, 'utf8');
    } catch {
      return undefined;
    }
  }
  const path = packageFile(name);
  return path === undefined ? undefined : readFileSync(path, 'utf8');
}

/**
 * The path of a package file on disk, found by walking up from this module (built into dist/src,
 * or bundled into dist/bundle). Undefined in a single executable, which has no such files.
 */
export function packageFile(name: string): string | undefined {
  if (isSea()) return undefined;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 5; i++) {
    const candidate = join(dir, name);
    if (existsSync(candidate) && (name !== 'package.json' || isOurs(candidate))) return candidate;
    dir = dirname(dir);
  }
  return undefined;
}

function isOurs(path: string): boolean {
  try {
    return (JSON.parse(readFileSync(path, 'utf8')) as { name?: unknown }).name === PACKAGE_NAME;
  } catch {
    return false;
  }
}
