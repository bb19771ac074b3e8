import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError } from '../errors.js';

/**
 * Two porter processes on one state directory would both report the same journal entries and
 * race each other's claims; the lock makes the second one refuse to start. A lock left by a
 * process that no longer exists (kill -9, power loss) is taken over.
 */
export function lockStateDir(stateDir: string): () => void {
  mkdirSync(stateDir, { recursive: true, mode: 0o700 });
  const path = join(stateDir, 'porter.lock');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      writeFileSync(path, String(process.pid), { flag: 'wx', mode: 0o600 });
      return () => rmSync(path, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const holder = Number.parseInt(readFileSync(path, 'utf8'), 10);
      if (Number.isInteger(holder) && holder !== process.pid && isAlive(holder)) {
        throw new ConfigError(
          `state directory ${stateDir} is in use by another porter process (pid ${holder}): stop it, or give this instance its own stateDir`,
        );
      }
      rmSync(path, { force: true });
    }
  }
  throw new ConfigError(`could not lock the state directory ${stateDir}: remove ${path} if no porter is running`);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
