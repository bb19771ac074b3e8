import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startBed, type TestBed } from './harness.js';

/**
 * Over the real CLI: a state directory porter cannot use ends `porter run` with
 * exit 78 (systemd does not restart it) and a message naming the path, what is wrong and what to
 * do; `porter check` reports the same line and exit code. Nothing is claimed.
 */

type Setup = (bed: TestBed) => string;

const sysfs = statSync('/sys/kernel', { throwIfNoEntry: false })?.isDirectory() ? false : 'no /sys/kernel here';

const cases: Array<[string, Setup, RegExp, string | false]> = [
  [
    'a dangling symlink',
    (bed) => {
      const link = join(bed.dir, 'state-link');
      symlinkSync(join(bed.dir, 'missing-volume'), link);
      return link;
    },
    /stateDir \S+state-link is a symbolic link to \S+missing-volume, which does not exist \(a dangling link\): create \S+ or fix the link/,
    false,
  ],
  [
    'a regular file',
    (bed) => {
      const file = join(bed.dir, 'state-file');
      writeFileSync(file, '');
      return file;
    },
    /stateDir \S+state-file is a file, not a directory: move the file away/,
    false,
  ],
  [
    'a directory even root cannot write (/sys/kernel)',
    () => '/sys/kernel',
    /stateDir \/sys\/kernel is not usable: porter's user \(uid \d+\) may not create files in \/sys\/kernel \(EACCES\)/,
    sysfs,
  ],
  [
    'a parent that cannot be created in (/sys)',
    () => '/sys/porter/state',
    /stateDir \/sys\/porter\/state cannot be created: .* may not create files in \/sys \(EPERM\)/,
    sysfs,
  ],
  [
    'a path under /proc (a recursive mkdir would spin there forever)',
    () => '/proc/self/porter-state',
    /stateDir \/proc\/self\/porter-state cannot be created/,
    process.platform === 'linux' ? false : 'Linux only',
  ],
];

describe('a state directory porter cannot use (real CLI)', () => {
  for (const [name, setup, message, skip] of cases) {
    test(`${name}: run and check exit 78 with what is wrong and what to do`, { skip }, async () => {
      const bed = await startBed();
      try {
        const stateDir = setup(bed);
        bed.writeConfig((config) => (config.stateDir = stateDir));
        const run = bed.spawnPorter();
        const check = bed.spawnPorter({ args: ['check', '-c', bed.configPath] });
        assert.deepEqual(await run.waitExit(), { code: 78, signal: null }, run.tail());
        assert.match(run.stderr, new RegExp(`^porter: E_STATE_DIR: ${message.source}`, 'm'), run.tail());
        assert.match(run.stderr, /or set stateDir to a directory porter's user can write/);
        assert.deepEqual(await check.waitExit(), { code: 78, signal: null }, check.tail());
        assert.match(check.stdout, new RegExp(`^✖ ${message.source}`, 'm'), check.tail());
        assert.equal(bed.api.claimedCount, 0);
      } finally {
        await bed.close();
      }
    });
  }
});
