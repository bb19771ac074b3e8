import { closeSync, constants, fstatSync, openSync, readdirSync, readlinkSync, readSync, statSync } from 'node:fs';

/**
 * The file operations detection uses, so tests can hand it any file system. Each throws a
 * NodeJS.ErrnoException as node:fs does (ENOENT when the path is not there).
 */
export interface FileSeam {
  /** At most `limit` bytes of a regular file; `complete` is false when there was more. */
  readFile(path: string, limit: number): { bytes: Buffer; complete: boolean };
  readDir(path: string): string[];
  readLink(path: string): string;
  /** Identifies the file a path leads to (device and inode), to notice one file reached by two paths. */
  fileId(path: string): string;
}

/** Settings files are a few kilobytes; anything over this is not one, and is not read whole. */
export const READ_LIMIT = 1024 * 1024;

class NotRegularFileError extends Error {
  readonly code = 'ENOTREG';
}

export const nodeFiles: FileSeam = {
  readFile(path, limit) {
    // Non-blocking, so a FIFO or a device named like a settings file cannot hang detection.
    const fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY);
    try {
      if (!fstatSync(fd).isFile()) throw new NotRegularFileError(`${path} is not a regular file`);
      // /proc files report size 0, so read until the end rather than trusting the size.
      const buffer = Buffer.alloc(limit + 1);
      let filled = 0;
      for (;;) {
        const count = readSync(fd, buffer, filled, buffer.length - filled, null);
        if (count === 0 || filled + count === buffer.length) {
          filled += count;
          break;
        }
        filled += count;
      }
      return { bytes: buffer.subarray(0, Math.min(filled, limit)), complete: filled <= limit };
    } finally {
      closeSync(fd);
    }
  },
  readDir: (path) => readdirSync(path),
  readLink: (path) => readlinkSync(path),
  fileId(path) {
    const stat = statSync(path, { bigint: true });
    return `${stat.dev}:${stat.ino}`;
  },
};

/** The error code of a failed file operation, if it has one. */
export function errorCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' ? code : undefined;
}
