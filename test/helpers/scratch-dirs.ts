import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, afterEach } from 'node:test';

/**
 * Folders for one test file's state, removed after each test (`'each'`) or once its tests are
 * over (`'file'`, for folders a `before` or several tests share): `const scratch =
 * scratchDirs('porter-journal-', 'each')`, then `scratch()` wherever a test needs a fresh one.
 */
export function scratchDirs(prefix: string, removed: 'each' | 'file'): () => string {
  const dirs: string[] = [];
  (removed === 'each' ? afterEach : after)(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
  return () => {
    const dir = mkdtempSync(join(tmpdir(), prefix));
    dirs.push(dir);
    return dir;
  };
}
