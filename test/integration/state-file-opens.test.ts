import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { scratchDirs } from '../helpers/scratch-dirs.js';
import { Journal } from '../../src/delivery/journal/journal.js';
import { HISTORY_FILE, PREVIOUS_HISTORY_FILE } from '../../src/delivery/history/history-file.js';
import { LOCK_FILE } from '../../src/delivery/state/state-lock.js';
import { makeOdd, ODD_KINDS, refusalOf, type OddKind } from '../helpers/odd-files.js';

/**
 * A FIFO, a UNIX socket, a directory or a character device put in place of one of porter's state
 * files while porter runs is refused by each open on its own, promptly: a FIFO opened for reading
 * blocks until a writer comes (the main thread for a synchronous open, a threadpool thread for an
 * asynchronous one, which also keeps the process from exiting). The opens run in a child process
 * with a bound, so that a hang (the old code) is a failing test, not a stuck one. The check at
 * start is in test/delivery/state/state-file.test.ts.
 */

const scratch = scratchDirs('porter-statefile-', 'file');

/** What the child process saw: an error thrown, or the fields its body wrote. */
interface Seen {
  readonly threw: boolean;
  readonly name?: string;
  readonly exitCode?: number;
  readonly message?: string;
  readonly writable?: boolean;
  readonly lastError?: string;
  readonly logged?: string;
}

/** Generous: a loaded 2-core machine, and the history case waits up to 15 s for its error line in the old code. */
const CHILD_BOUND_MS = 45_000;

/**
 * Runs `body` (an ES module body with DIR, TARGET, STASH, load() and out() in scope) in its own
 * Node process: a FIFO that blocks the main thread or a threadpool thread there shows as a
 * process that did not exit, which is killed and reported.
 */
async function isolated(body: string, names: { dir: string; target: string; stash: string }): Promise<Seen> {
  const script = [
    `const base = ${JSON.stringify(import.meta.url)};`,
    `const DIR = ${JSON.stringify(names.dir)}, TARGET = ${JSON.stringify(names.target)}, STASH = ${JSON.stringify(names.stash)};`,
    'const load = (path) => import(new URL(path, base).href);',
    "const out = (value) => process.stdout.write(JSON.stringify(value) + '\\n');",
    'try {',
    body,
    '} catch (error) {',
    '  out({ threw: true, name: error?.name, exitCode: error?.exitCode, message: String(error?.message ?? error) });',
    '}',
  ].join('\n');
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  let timer: NodeJS.Timeout | undefined;
  const exited = await Promise.race([
    new Promise<boolean>((resolve) => child.once('close', () => resolve(true))),
    new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), CHILD_BOUND_MS))),
  ]);
  clearTimeout(timer);
  if (!exited) {
    child.kill('SIGKILL');
    assert.fail(`the child process did not exit within ${CHILD_BOUND_MS} ms (a hang); it wrote: ${stdout || '(nothing)'}`);
  }
  const last = stdout.trim().split('\n').pop();
  assert.ok(last, `the child wrote nothing; stderr: ${stderr}`);
  return JSON.parse(last) as Seen;
}

interface Case {
  /** The file that is replaced, in the state directory. */
  readonly file: string;
  /** Prepares the state directory before the odd thing is put in place (the journal's earlier generation). */
  readonly before?: (dir: string) => void;
  /** True when the child itself moves the odd thing from STASH into place (after porter's start check). */
  readonly childMoves?: boolean;
  readonly body: string;
  readonly expect: (seen: Seen, target: string, kind: OddKind) => void;
}

function refused(seen: Seen, target: string, kind: OddKind): void {
  assert.equal(seen.threw, true, JSON.stringify(seen));
  assert.equal(seen.name, 'StateFileError', seen.message);
  assert.equal(seen.exitCode, 78);
  assert.match(seen.message ?? '', refusalOf(target, kind));
}

function journalNotWritable(seen: Seen, target: string, kind: OddKind): void {
  assert.equal(seen.threw, false, seen.message);
  assert.equal(seen.writable, false);
  assert.match(seen.lastError ?? '', refusalOf(target, kind));
}

const oneGeneration = (dir: string) => {
  new Journal(dir).close();
  unlinkSync(join(dir, 'journal-1.log'));
};

const openJournal =
  "const { Journal } = await load('../../src/delivery/journal/journal.js');\n" +
  'const journal = new Journal(DIR);\n' +
  'out({ threw: false, writable: journal.writable, lastError: journal.lastWriteError?.message });\n' +
  'journal.close();';

const CASES: Record<string, Case> = {
  'the lock file, found while taking the lock': {
    file: LOCK_FILE,
    childMoves: true,
    body:
      "const { lockStateDir } = await load('../../src/delivery/state/state-lock.js');\n" +
      "const { renameSync } = await import('node:fs');\n" +
      "await lockStateDir(DIR, { kernelLock: async () => { renameSync(STASH, TARGET); return { state: 'unsupported' }; } });\n" +
      'out({ threw: false });',
    expect: refused,
  },
  'the lock file, replaced before porter releases it at stop': {
    file: LOCK_FILE,
    childMoves: true,
    body:
      "const { lockStateDir } = await load('../../src/delivery/state/state-lock.js');\n" +
      "const { renameSync, unlinkSync } = await import('node:fs');\n" +
      "const { release } = await lockStateDir(DIR, { kernelLock: async () => ({ state: 'unsupported' }) });\n" +
      'unlinkSync(TARGET);\n' +
      'renameSync(STASH, TARGET);\n' +
      'release();\n' +
      'out({ threw: false });',
    expect: (seen) => assert.equal(seen.threw, false, seen.message),
  },
  "the journal's snapshot journal.json": {
    file: 'journal.json',
    body: openJournal,
    expect: refused,
  },
  "the journal's log of the snapshot's generation": {
    file: 'journal-1.log',
    before: oneGeneration,
    body: openJournal,
    expect: refused,
  },
  "the journal's next log, opened for appending": {
    file: 'journal-2.log',
    before: oneGeneration,
    body: openJournal,
    expect: journalNotWritable,
  },
  "the journal's temporary snapshot, opened for writing": {
    file: '.journal.json.tmp',
    body: openJournal,
    expect: journalNotWritable,
  },
  'history.jsonl, read by porter history and /history': {
    file: HISTORY_FILE,
    body: "const { readHistory } = await load('../../src/delivery/history/history-file.js');\nawait readHistory(DIR);\nout({ threw: false });",
    expect: refused,
  },
  'history.1.jsonl, read by porter history and /history': {
    file: PREVIOUS_HISTORY_FILE,
    body: "const { readHistory } = await load('../../src/delivery/history/history-file.js');\nawait readHistory(DIR);\nout({ threw: false });",
    expect: refused,
  },
  'history.jsonl, appended to by the daemon (it logs, then stops at once)': {
    file: HISTORY_FILE,
    body:
      "const { DeliveryHistory } = await load('../../src/delivery/history/history.js');\n" +
      "const { systemClock } = await load('../../src/clock.js');\n" +
      'const errors = [];\n' +
      'const logger = { child: () => logger, error: (fields) => errors.push(fields), warn() {}, info() {} };\n' +
      'const history = new DeliveryHistory({ stateDir: DIR, maxBytes: 1e6, scrub: (text) => text, clock: systemClock, logger });\n' +
      "history.record({ serverId: 's', id: '1', command: 'give Steve diamond 1', outcome: { result: 'done' }, ms: 1, at: Date.now() });\n" +
      'for (const until = Date.now() + 15000; errors.length === 0 && Date.now() < until; ) await new Promise((r) => setTimeout(r, 20));\n' +
      'await history.close();\n' +
      'out({ threw: false, logged: errors[0]?.err });',
    expect: (seen, target, kind) => {
      assert.equal(seen.threw, false, seen.message);
      assert.match(seen.logged ?? '(no error logged)', refusalOf(target, kind));
    },
  },
};

describe('each open of a state file refuses what is not a regular file, promptly', () => {
  for (const [name, spec] of Object.entries(CASES)) {
    for (const kind of ODD_KINDS) {
      test(`${kind}: ${name}`, async () => {
        const root = scratch();
        const dir = join(root, 'state');
        mkdirSync(dir);
        spec.before?.(dir);
        const target = join(dir, spec.file);
        const stash = join(root, 'odd');
        const remove = await makeOdd(spec.childMoves ? stash : target, kind);
        try {
          spec.expect(await isolated(spec.body, { dir, target, stash }), target, kind);
        } finally {
          await remove();
        }
      });
    }
  }
});
