import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import {
  closeSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  rmdirSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { scratchDirs } from '../../helpers/scratch-dirs.js';
import { PorterError } from '../../../src/errors.js';
import { prepareStateDir, StateDirError, StateDirFullError } from '../../../src/delivery/state/state-dir.js';

/**
 * A state directory porter cannot use is a configuration error (exit 78) whose
 * message names the path, what is wrong and what to do, never a bare errno (exit 1, restarted
 * every 5 s by systemd). A full disk is the exception: it can free up, so it stays exit 1.
 */

const scratch = scratchDirs('porter-statedir-', 'file');

function refused(stateDir: string, message: RegExp): void {
  assert.throws(
    () => prepareStateDir(stateDir),
    (error: unknown) => {
      assert.ok(error instanceof StateDirError, String(error));
      assert.equal(error.exitCode, 78);
      assert.equal(error.code, 'E_STATE_DIR');
      assert.match(error.message, message);
      assert.match(error.message, /or set stateDir to a directory porter's user can write/);
      return true;
    },
  );
}

describe('state directory check at start', () => {
  test('a missing directory is created, parents too, mode 0700', () => {
    const dir = join(scratch(), 'a', 'b', 'state');
    prepareStateDir(dir);
    assert.ok(statSync(dir).isDirectory());
    assert.equal(statSync(dir).mode & 0o777, 0o700);
    assert.deepEqual(readdirSync(dir), [], 'the write probe leaves nothing behind');
  });

  test('an existing directory and a symlink to one are fine', () => {
    const dir = scratch();
    prepareStateDir(dir);
    const link = join(scratch(), 'link');
    symlinkSync(dir, link);
    prepareStateDir(link);
  });

  test('a dangling symlink: names the link, its missing target and what to do', () => {
    const base = scratch();
    const link = join(base, 'state');
    symlinkSync(join(base, 'gone'), link);
    refused(
      link,
      new RegExp(
        `^stateDir ${link} is a symbolic link to ${base}/gone, which does not exist \\(a dangling link\\): create ${base}/gone or fix the link`,
      ),
    );
  });

  test('a relative dangling symlink names its target resolved', () => {
    const base = scratch();
    symlinkSync('../nowhere', join(base, 'state'));
    refused(
      join(base, 'state'),
      new RegExp(`to \\.\\./nowhere, which does not exist \\(a dangling link\\): create ${join(base, '..', 'nowhere')}`),
    );
  });

  test('a symlink loop', () => {
    const base = scratch();
    symlinkSync(join(base, 'b'), join(base, 'a'));
    symlinkSync(join(base, 'a'), join(base, 'b'));
    refused(join(base, 'a'), /is a symbolic link that loops back on itself/);
  });

  test('a regular file', () => {
    const file = join(scratch(), 'state');
    writeFileSync(file, '');
    refused(file, new RegExp(`^stateDir ${file} is a file, not a directory: move the file away`));
  });

  test('a symlink to a file', () => {
    const base = scratch();
    writeFileSync(join(base, 'file'), '');
    symlinkSync(join(base, 'file'), join(base, 'state'));
    refused(join(base, 'state'), /is a symbolic link to .*file, which is not a directory/);
  });

  test('a parent that is a file: names that parent', () => {
    const base = scratch();
    writeFileSync(join(base, 'file'), '');
    refused(
      join(base, 'file', 'state'),
      new RegExp(`^stateDir ${base}/file/state cannot be created: ${base}/file is a file, not a directory`),
    );
  });

  const sysfs = statSync('/sys/kernel', { throwIfNoEntry: false })?.isDirectory() ? false : 'no /sys/kernel here';

  test(
    'a directory nobody may create files in, even root (/sys/kernel): not writable, says whose access is missing',
    { skip: sysfs },
    () => {
      refused(
        '/sys/kernel',
        new RegExp(
          `^stateDir /sys/kernel is not usable: porter's user \\(uid ${process.getuid!()}\\) may not create files in /sys/kernel \\(EACCES\\): give porter's user write access`,
        ),
      );
    },
  );

  test('a parent in which the directory cannot be created (/sys)', { skip: sysfs }, () => {
    refused(
      '/sys/porter-state/journal',
      /^stateDir \/sys\/porter-state\/journal cannot be created: porter's user \(uid \d+\) may not create files in \/sys \(EPERM\): create \/sys\/porter-state yourself/,
    );
  });

  test(
    'under /proc, where a recursive mkdir would spin forever: refused at once',
    { skip: process.platform === 'linux' ? false : 'Linux only' },
    () => {
      refused(
        '/proc/self/porter-state',
        /^stateDir \/proc\/self\/porter-state cannot be created: cannot create files in \/proc\/self \(ENOENT\)/,
      );
    },
  );
});

/** Mounting needs root (CI runs as root); elsewhere these are skipped with the reason, and CI fails instead. */
function mountTmpfs(options: string): { point: string; error?: string } {
  const point = mkdtempSync(join(tmpdir(), 'porter-statedir-mount-'));
  const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', options, 'tmpfs', point], { encoding: 'utf8' });
  if (mounted.status === 0) return { point };
  rmdirSync(point);
  const error = `cannot mount a tmpfs here (${(mounted.stderr || mounted.error?.message || '').trim()})`;
  if (process.env.CI === 'true') throw new Error(`${error}: CI runs as root and must be able to`);
  return { point, error };
}

function unmount(point: string): void {
  spawnSync('umount', [point]);
  rmdirSync(point);
}

const readOnly = mountTmpfs('ro,size=64k');
describe('a state directory on a read-only file system', { skip: readOnly.error }, () => {
  after(() => unmount(readOnly.point));

  test('the directory itself: EROFS, says to remount or choose another', () => {
    refused(
      readOnly.point,
      new RegExp(
        `^stateDir ${readOnly.point} is not usable: ${readOnly.point} is on a read-only file system \\(EROFS\\): remount it read-write`,
      ),
    );
  });

  test('a directory to be created on it', () => {
    refused(join(readOnly.point, 'state'), new RegExp(`cannot be created: ${readOnly.point} is on a read-only file system \\(EROFS\\)`));
  });
});

const small = mountTmpfs('size=64k,mode=0700');
describe('a state directory on a full disk', { skip: small.error }, () => {
  after(() => unmount(small.point));

  test('is not a configuration error: exit 1, so the supervisor tries again once space is freed', () => {
    const state = join(small.point, 'state');
    mkdirSync(state);
    const filler = openSync(join(small.point, 'filler'), 'w');
    try {
      const block = Buffer.alloc(4096, 1);
      for (;;) writeSync(filler, block);
    } catch (error) {
      assert.equal((error as NodeJS.ErrnoException).code, 'ENOSPC');
    } finally {
      closeSync(filler);
    }
    assert.throws(
      () => prepareStateDir(state),
      (error: unknown) =>
        error instanceof StateDirFullError &&
        !(error instanceof StateDirError) &&
        error instanceof PorterError &&
        error.exitCode === 1 &&
        new RegExp(`^stateDir ${state}: the disk is full \\(ENOSPC\\): free some space`).test(error.message),
    );
    rmSync(join(small.point, 'filler'));
    prepareStateDir(state);
  });
});
