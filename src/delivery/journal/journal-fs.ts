import * as fs from 'node:fs';
import { join } from 'node:path';
import { openStateFileSync } from '../state/state-file.js';

/**
 * The synchronous file operations the journal performs, passed in so that the journal's promise
 * (never twice, never lost) can be tested against a disk that fails or a process that dies at
 * any single operation (test/delivery/journal-faults.test.ts). Production uses node:fs itself.
 */
export type JournalFs = Pick<
  typeof fs,
  | 'openSync'
  | 'closeSync'
  | 'writeSync'
  | 'fsyncSync'
  | 'fdatasyncSync'
  | 'ftruncateSync'
  | 'fstatSync'
  | 'renameSync'
  | 'unlinkSync'
  | 'readFileSync'
  | 'readdirSync'
  | 'mkdirSync'
>;

export const nodeFs: JournalFs = fs;

/** Makes a rename or a new file in `dir` survive a power cut. */
export function fsyncDirectory(files: JournalFs, dir: string): void {
  const fd = files.openSync(dir, 'r');
  try {
    files.fsyncSync(fd);
  } finally {
    files.closeSync(fd);
  }
}

/** Writes every byte of `bytes` at the file position, however many calls the kernel needs. */
export function writeAll(files: JournalFs, fd: number, bytes: Uint8Array): void {
  for (let written = 0; written < bytes.length;) {
    written += files.writeSync(fd, bytes, written, bytes.length - written);
  }
}

/**
 * Replaces `dir/name` with `text` so that a reader (or a restart after a crash at any point) sees
 * either the old file or the new one, never a mix: a synced temporary file renamed over it. The
 * caller syncs the directory when the rename itself must survive a power cut.
 */
export function replaceFile(files: JournalFs, dir: string, name: string, text: string): void {
  const target = join(dir, name);
  const temporary = join(dir, `.${name}.tmp`);
  const fd = openStateFileSync(temporary, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_TRUNC, 0o600, files);
  try {
    writeAll(files, fd, Buffer.from(text, 'utf8'));
    files.fsyncSync(fd);
  } finally {
    files.closeSync(fd);
  }
  files.renameSync(temporary, target);
}
