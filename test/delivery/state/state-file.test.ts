import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { scratchDirs } from '../../helpers/scratch-dirs.js';
import { Journal } from '../../../src/delivery/journal/journal.js';
import { HISTORY_FILE, PREVIOUS_HISTORY_FILE } from '../../../src/delivery/history/history-file.js';
import { prepareStateDir } from '../../../src/delivery/state/state-dir.js';
import { isStateFileName, StateFileError } from '../../../src/delivery/state/state-file.js';
import { LOCK_FILE } from '../../../src/delivery/state/state-lock.js';
import { makeOdd, ODD_KINDS, refusalOf } from '../../helpers/odd-files.js';

/**
 * A FIFO, a UNIX socket, a directory or a character device where porter keeps one of its state
 * files (the lock, the journal's snapshot, log and temporary file, the history's two files) is
 * refused with exit 78, a message naming the path, what it is and the fix, and never a hang: a
 * FIFO opened for reading blocks until a writer comes (the main thread for a synchronous open, a
 * threadpool thread for an asynchronous one, which also keeps the process from exiting).
 *
 * Two layers are tested: here the check at start (prepareStateDir, also `porter check`); each open
 * on its own, for a file replaced while porter runs, in test/integration/state-file-opens.test.ts
 * (each in a child process with a bound, so that a hang is a failing test, not a stuck one).
 */

const scratch = scratchDirs('porter-statefile-', 'file');

const FILES = [LOCK_FILE, 'journal.json', 'journal-3.log', '.journal.json.tmp', HISTORY_FILE, PREVIOUS_HISTORY_FILE];

describe('the check at start names a state file that is not a regular file (exit 78)', () => {
  for (const name of FILES) {
    for (const kind of ODD_KINDS) {
      test(`${kind} as ${name}`, async () => {
        const dir = scratch();
        const path = join(dir, name);
        const remove = await makeOdd(path, kind);
        try {
          assert.throws(
            () => prepareStateDir(dir),
            (error: unknown) => {
              assert.ok(error instanceof StateFileError, String(error));
              assert.equal(error.exitCode, 78);
              assert.equal(error.code, 'E_STATE_FILE');
              assert.match(error.message, refusalOf(path, kind));
              return true;
            },
          );
        } finally {
          await remove();
        }
      });
    }
  }

  test('every odd file is named at once; other names, and a link to a regular file, are left alone', async () => {
    const dir = scratch();
    writeFileSync(join(dir, 'elsewhere.jsonl'), '');
    symlinkSync(join(dir, 'elsewhere.jsonl'), join(dir, HISTORY_FILE));
    mkdirSync(join(dir, 'backups'));
    await makeOdd(join(dir, 'notes.fifo'), 'FIFO');
    prepareStateDir(dir);
    await makeOdd(join(dir, 'journal.json'), 'FIFO');
    await makeOdd(join(dir, LOCK_FILE), 'directory');
    assert.throws(
      () => prepareStateDir(dir),
      (error: unknown) => {
        assert.ok(error instanceof StateFileError);
        assert.match(error.message, refusalOf(join(dir, 'journal.json'), 'FIFO'));
        assert.match(error.message, refusalOf(join(dir, LOCK_FILE), 'directory'));
        return true;
      },
    );
  });

  test('the names it checks are every file a running journal leaves', async () => {
    const dir = scratch();
    const journal = new Journal(dir);
    await journal.claim('s', '1', 'say hi', 1);
    journal.close();
    const names = readdirSync(dir);
    assert.ok(names.length >= 2, names.join(', '));
    for (const name of [...names, LOCK_FILE, HISTORY_FILE, PREVIOUS_HISTORY_FILE]) assert.ok(isStateFileName(name), name);
    assert.equal(isStateFileName('journal-x.log'), false);
  });
});
