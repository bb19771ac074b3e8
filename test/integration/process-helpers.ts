import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { waitFor } from '../helpers/wait-for.js';

/** Fixture scripts live in the source tree; these tests run from dist/test/integration/. */
export const fixture = (name: string): string => fileURLToPath(new URL(`../../../test/fixtures/scripts/${name}`, import.meta.url));

/**
 * True while `pid` is a live process. An orphan killed by us stays a zombie until init reaps
 * it, and in a container init may never do so; a zombie runs nothing, so it counts as gone.
 */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return false;
    throw error;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

/** Reads "<leader pid> <child pid>" written by the hang/fork fixtures. */
export async function readPids(file: string): Promise<{ leader: number; child: number }> {
  const text = await waitFor(
    async () => {
      try {
        return await readFile(file, 'utf8');
      } catch {
        return undefined;
      }
    },
    { what: `pid file ${file}` },
  );
  const [leader, child] = text.trim().split(' ').map(Number);
  return { leader: leader!, child: child! };
}

export function killQuietly(pid: number | undefined): void {
  if (!pid) return;
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // already gone
  }
}
