import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** Compiled tests run from dist/test/ship/; the repository root is three folders up. */
export const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));

export function repoPath(relative: string): string {
  return fileURLToPath(new URL(relative, new URL('../../../', import.meta.url)));
}

export function readRepoFile(relative: string): string {
  return readFileSync(repoPath(relative), 'utf8');
}
