import { createHash } from 'node:crypto';
import { statSync } from 'node:fs';
import { createServer } from 'node:net';

/**
 * A lock the kernel holds for porter and drops the moment the process dies, however it dies: a
 * Linux abstract Unix socket (a name that exists only while a socket is bound to it; nothing on
 * disk) named after the state directory's device and inode. Binding is atomic, so of two porters
 * started at the same instant exactly one gets it. Node has no flock() and porter takes no native
 * dependency; this is the kernel-released lock Node can take on its own.
 *
 * Linux only; elsewhere `acquire` answers 'unsupported' and the lock file alone decides. Its
 * scope is one network namespace: two containers sharing a state volume each get their own.
 */
export type KernelLock = { readonly state: 'held'; release(): void } | { readonly state: 'busy' } | { readonly state: 'unsupported' };

export async function acquireKernelLock(stateDir: string): Promise<KernelLock> {
  if (process.platform !== 'linux') return { state: 'unsupported' };
  const server = createServer((socket) => socket.destroy());
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(socketName(stateDir), () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EADDRINUSE') return { state: 'busy' };
    // No Unix sockets allowed here (a seccomp or RestrictAddressFamilies= without AF_UNIX): the lock file decides.
    return { state: 'unsupported' };
  }
  server.unref();
  return {
    state: 'held',
    release: () => {
      server.close();
    },
  };
}

/** One name per directory however it is reached (symlink, bind mount, relative path). */
function socketName(stateDir: string): string {
  const { dev, ino } = statSync(stateDir, { bigint: true });
  return `\0porter-state-lock-${createHash('sha256').update(`${dev}:${ino}`).digest('hex').slice(0, 40)}`;
}
