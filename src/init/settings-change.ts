import { copyFile, constants, readFile, writeFile } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import type { Fix } from './detect/types.js';

/** An edit init made to a game's settings file, and where the file as it was is kept. */
export interface SettingsChange {
  readonly shownFile: string;
  readonly summary: string;
  /** The copy of the file from before the edit, as shown; undefined when the edit created the file. */
  readonly shownBackup: string | undefined;
}

/**
 * What init has changed outside its own folder so far. Read when init is stopped (Ctrl-C at a
 * question or at any other moment), so the owner learns what was touched and how to undo it.
 */
export class SettingsChanges {
  readonly #changes: SettingsChange[] = [];

  add(change: SettingsChange): void {
    this.#changes.push(change);
  }

  /** "./server.properties was changed (…); the file as it was is in …", or undefined when nothing was. */
  describe(): string | undefined {
    if (this.#changes.length === 0) return undefined;
    return this.#changes.map(describeChange).join('; ');
  }
}

export function describeChange(change: SettingsChange): string {
  return change.shownBackup === undefined
    ? `${change.shownFile} was created (${change.summary}); delete it to undo`
    : `${change.shownFile} was changed (${change.summary}); the file as it was is in ${change.shownBackup}: copy it back to undo`;
}

/**
 * Applies `fix` to its file, after copying the file as it is to `<file>.porter-backup` (or
 * `.porter-backup-2`, … so an earlier backup is never overwritten). The copy keeps the file's mode:
 * it may hold the game's other secrets.
 */
export async function applyFix(fix: Fix, password: string): Promise<SettingsChange> {
  let current: Uint8Array | undefined;
  try {
    current = await readFile(fix.file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const next = fix.apply(current ?? new Uint8Array(), password);
  const backup = current === undefined ? undefined : await backUp(fix.file);
  await writeFile(fix.file, next);
  const where = ` in ${fix.shownFile}`;
  return {
    shownFile: fix.shownFile,
    summary: fix.summary.endsWith(where) ? fix.summary.slice(0, -where.length) : fix.summary,
    shownBackup: backup === undefined ? undefined : `${dirname(fix.shownFile)}/${basename(backup)}`,
  };
}

async function backUp(file: string): Promise<string> {
  for (let n = 1; ; n++) {
    const backup = `${file}.porter-backup${n === 1 ? '' : `-${n}`}`;
    try {
      await copyFile(file, backup, constants.COPYFILE_EXCL);
      return backup;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || n >= 100) throw error;
    }
  }
}
