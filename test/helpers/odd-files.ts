import { execFileSync } from 'node:child_process';
import { mkdirSync, symlinkSync } from 'node:fs';
import { createServer } from 'node:net';

/**
 * Things that are not regular files, to put where porter keeps one of its state files. A FIFO is
 * made by coreutils' mkfifo (Node has no mkfifo), spawned with an argv array; a character device
 * is reached through a symbolic link to /dev/null (porter follows links), since making one needs
 * mknod and root.
 */

export const ODD_KINDS = ['FIFO', 'UNIX socket', 'directory', 'character device'] as const;
export type OddKind = (typeof ODD_KINDS)[number];

/** How porter's message names each kind, as a regular expression's source. */
export const KIND_TEXT: Record<OddKind, string> = {
  FIFO: 'a FIFO \\(named pipe\\)',
  'UNIX socket': 'a UNIX socket',
  directory: 'a directory',
  'character device': 'a character device',
};

/** Puts a `kind` at `path`; resolves with what takes it away again (a socket's listener must be closed). */
export async function makeOdd(path: string, kind: OddKind): Promise<() => Promise<void>> {
  switch (kind) {
    case 'FIFO':
      execFileSync('mkfifo', ['-m', '600', path]);
      return () => Promise.resolve();
    case 'UNIX socket': {
      const server = createServer((socket) => socket.destroy());
      await new Promise<void>((resolve, reject) => server.once('error', reject).listen(path, resolve));
      return () => new Promise<void>((resolve) => server.close(() => resolve()));
    }
    case 'directory':
      mkdirSync(path);
      return () => Promise.resolve();
    case 'character device':
      symlinkSync('/dev/null', path);
      return () => Promise.resolve();
  }
}

/** porter's refusal of a non-regular state file at `path`. */
export function refusalOf(path: string, kind: OddKind): RegExp {
  const escaped = path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`state file ${escaped} is ${KIND_TEXT[kind]}, not a regular file: remove it; porter creates the file itself`);
}
