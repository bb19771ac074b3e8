import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

let version: string | undefined;

/** The installed package's version, found by walking up from this file (built or bundled). */
export function porterVersion(): string {
  version ??= find();
  return version;
}

function find(): string {
  for (let dir = dirname(fileURLToPath(import.meta.url)); ; dir = dirname(dir)) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'porter' && pkg.version) return pkg.version;
    } catch {
      // not here: keep walking up
    }
    if (dirname(dir) === dir) return 'unknown';
  }
}
