import { afterEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { scratchDirs } from '../helpers/scratch-dirs.js';
import { ConfigError } from '../../src/errors.js';
import { currentHolder, processStartTime, type LockHolder } from '../../src/delivery/state/lock-holder.js';
import { hostname } from 'node:os';
import { LOCK_FILE, lockStateDir } from '../../src/delivery/state/state-lock.js';
import { waitFor } from '../helpers/wait-for.js';

/**
 * The state directory lock identifies its holder exactly. A lock that names a
 * pid now used by another process (after a reboot, or a long run) is taken over with an info
 * line naming the old holder; a lock whose holder really runs is refused with exit 78.
 */

const children: ChildProcess[] = [];
const stateDir = scratchDirs('porter-lock-', 'file');
afterEach(() => {
  for (const child of children.splice(0)) child.kill('SIGKILL');
});

/** A live process that is not porter. */
async function bystander(): Promise<number> {
  const child = spawn('sleep', ['600'], { stdio: 'ignore' });
  children.push(child);
  await new Promise((resolve, reject) => child.once('spawn', resolve).once('error', reject));
  return child.pid!;
}

function capture() {
  const lines: Array<{ obj: Record<string, unknown>; msg: string }> = [];
  return { lines, logger: { info: (obj: Record<string, unknown>, msg: string) => void lines.push({ obj, msg }) } };
}

/**
 * The message of the one takeover line, found by its event: what it says (which holder, and why
 * it was taken over) is what these tests are about.
 */
function takenOver(lines: ReturnType<typeof capture>['lines']): string {
  assert.deepEqual(
    lines.map((line) => line.obj.event),
    ['state.lock.takeover'],
    JSON.stringify(lines),
  );
  return lines[0]!.msg;
}

const lockPath = (dir: string) => join(dir, LOCK_FILE);
const writeLock = (dir: string, record: unknown) =>
  writeFileSync(lockPath(dir), typeof record === 'string' ? record : JSON.stringify(record));
const holderOf = (dir: string) => JSON.parse(readFileSync(lockPath(dir), 'utf8')) as LockHolder;
const me = currentHolder();
const linux = process.platform === 'linux' && me.start !== undefined && me.boot !== undefined;

async function refused(promise: Promise<unknown>): Promise<ConfigError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof ConfigError, String(error));
    assert.equal(error.exitCode, 78);
    return error;
  }
  assert.fail('expected the lock to be refused');
}

describe(
  'state directory lock: the holder is identified exactly',
  { skip: linux ? false : 'needs /proc (process start times and the boot id)' },
  () => {
    test('records pid, process start time and boot id', async () => {
      const dir = stateDir();
      const { release } = await lockStateDir(dir);
      const { pid, start, boot, pidns, host, nonce, lease } = holderOf(dir);
      assert.deepEqual(
        { pid, start, boot, pidns, host, lease },
        { pid: process.pid, start: me.start, boot: me.boot, pidns: me.pidns, host: hostname(), lease: 0 },
      );
      assert.match(String(nonce), /^[0-9a-f]{24}$/, 'a nonce of this run');
      release();
      assert.equal(existsSync(lockPath(dir)), false);
    });

    test('a live pid that is not porter (another start time) is taken over, with an info line naming the old holder', async () => {
      const dir = stateDir();
      const pid = await bystander();
      writeLock(dir, { pid, start: '1', boot: me.boot });
      const { lines, logger } = capture();
      const { release } = await lockStateDir(dir, { logger });
      assert.equal(holderOf(dir).pid, process.pid);
      assert.match(
        takenOver(lines),
        new RegExp(
          `taking over the state directory lock left by pid ${pid}, started at tick 1.*: pid ${pid} now belongs to another process`,
        ),
      );
      assert.deepEqual(lines[0]!.obj.previousHolder, { pid, start: '1', boot: me.boot });
      release();
    });

    test('a lock from before the last reboot is taken over, even when its pid and start time match a live process', async () => {
      const dir = stateDir();
      const pid = await bystander();
      writeLock(dir, { pid, start: processStartTime(pid), boot: '00000000-0000-4000-8000-000000000000' });
      const { lines, logger } = capture();
      const { release } = await lockStateDir(dir, { logger });
      assert.equal(holderOf(dir).pid, process.pid);
      assert.match(takenOver(lines), /it was written before the machine restarted/);
      release();
    });

    test('a holder that really runs is refused: exit 78, naming its pid and what to do', async () => {
      const dir = stateDir();
      const pid = await bystander();
      writeLock(dir, { pid, start: processStartTime(pid), boot: me.boot });
      const error = await refused(lockStateDir(dir));
      assert.match(
        error.message,
        new RegExp(
          `state directory ${dir} is in use by another porter process \\(pid ${pid}, started at tick \\d+, boot [-\\w]+\\): stop it, or give this instance its own stateDir`,
        ),
      );
      assert.equal(holderOf(dir).pid, pid, 'the holder keeps its lock');
    });

    test('a second lock while the first is held is refused, and free again after release', async () => {
      const dir = stateDir();
      const { release } = await lockStateDir(dir);
      const error = await refused(lockStateDir(dir));
      assert.match(error.message, new RegExp(`in use by another porter process \\(pid ${process.pid}, on host `));
      release();
      (await lockStateDir(dir)).release();
    });

    test('the kernel lock refuses a second porter even when the lock file is gone, and whatever path names the directory', async () => {
      const dir = stateDir();
      const { release } = await lockStateDir(dir);
      rmSync(lockPath(dir));
      const link = join(stateDir(), 'link');
      symlinkSync(dir, link);
      for (const path of [dir, link]) {
        const error = await refused(lockStateDir(path));
        assert.match(error.message, /is in use by another porter process \(not named in porter\.lock: it may be starting\)/);
      }
      release();
    });

    test('a process that no longer exists is taken over', async () => {
      const dir = stateDir();
      const child = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
      await new Promise((resolve) => child.once('exit', resolve));
      writeLock(dir, { pid: child.pid, start: '5', boot: me.boot });
      const { lines, logger } = capture();
      (await lockStateDir(dir, { logger })).release();
      assert.match(takenOver(lines), new RegExp(`process ${child.pid} no longer exists`));
    });

    test('an empty or damaged lock file is taken over', async () => {
      for (const text of ['', '{"pid":', 'not a lock']) {
        const dir = stateDir();
        writeLock(dir, text);
        const { lines, logger } = capture();
        (await lockStateDir(dir, { logger })).release();
        assert.match(takenOver(lines), /left by an unknown process: it names no process/);
      }
    });

    describe('a bare pid, as older porters wrote it', () => {
      test('written before the last boot: taken over although the pid is alive', async () => {
        const dir = stateDir();
        const pid = await bystander();
        writeLock(dir, String(pid));
        utimesSync(lockPath(dir), new Date(1_000_000), new Date(1_000_000));
        const { lines, logger } = capture();
        (await lockStateDir(dir, { logger })).release();
        assert.match(takenOver(lines), /written before the machine restarted/);
      });

      test('written in this boot by a live process: refused, as before', async () => {
        const dir = stateDir();
        const pid = await bystander();
        writeLock(dir, String(pid));
        const error = await refused(lockStateDir(dir));
        assert.match(error.message, new RegExp(`\\(pid ${pid}\\): stop it`));
      });
    });

    test('release leaves a lock that is no longer ours alone', async () => {
      const dir = stateDir();
      const { release } = await lockStateDir(dir);
      writeLock(dir, { pid: 4242, start: '9', boot: me.boot });
      release();
      assert.equal(holderOf(dir).pid, 4242);
    });

    test('no temporary or moved-aside files are left behind', async () => {
      const dir = stateDir();
      writeLock(dir, { pid: 2 ** 22 + 1, start: '1', boot: me.boot });
      const { release } = await lockStateDir(dir);
      assert.deepEqual(readdirSync(dir), [LOCK_FILE]);
      release();
      assert.deepEqual(readdirSync(dir), []);
    });
  },
);

describe(
  'state directory lock file on its own (no kernel lock: not Linux, or another network namespace)',
  { skip: linux ? false : 'needs /proc' },
  () => {
    const stateLock = fileURLToPath(new URL('../../src/delivery/state/state-lock.js', import.meta.url));
    /**
     * A process that waits for "go" on stdin, then takes the lock with the kernel lock switched
     * off, prints "won" or "lost: <message>", and holds what it got until stdin closes.
     */
    const contender = `
    import { lockStateDir } from ${JSON.stringify(stateLock)};
    const dir = process.argv[1];
    process.stdout.write('ready\\n');
    process.stdin.once('data', async () => {
      try {
        await lockStateDir(dir, { kernelLock: async () => ({ state: 'unsupported' }) });
        process.stdout.write('won\\n');
      } catch (error) {
        process.stdout.write('lost: ' + error.message + '\\n');
      }
      process.stdin.once('end', () => process.exit(0));
      process.stdin.resume();
    });
  `;

    function start(dir: string) {
      const child = spawn(process.execPath, ['--input-type=module', '-e', contender, dir], { stdio: ['pipe', 'pipe', 'inherit'] });
      children.push(child);
      let out = '';
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
      return { child, output: () => out };
    }

    test('two porters that both see the same stale lock: exactly one wins, every round', { timeout: 120_000 }, async () => {
      for (let round = 0; round < 15; round++) {
        const dir = stateDir();
        writeLock(dir, { pid: 2 ** 22 + round, start: '1', boot: me.boot });
        const racers = [start(dir), start(dir)];
        await waitFor(() => racers.every((r) => r.output().includes('ready')), { timeoutMs: 30_000, what: 'both contenders to start' });
        for (const racer of racers) racer.child.stdin.write('go\n');
        await waitFor(() => racers.every((r) => /won|lost/.test(r.output())), { timeoutMs: 30_000, what: 'both contenders to finish' });
        const won = racers.filter((r) => r.output().includes('won'));
        assert.equal(won.length, 1, `round ${round}: ${racers.map((r) => r.output().trim()).join(' | ')}`);
        const loser = racers.find((r) => !r.output().includes('won'))!;
        assert.match(loser.output(), /in use by another porter process \(pid \d+, on host /);
        assert.equal(holderOf(dir).pid, won[0]!.child.pid);
        for (const racer of racers) racer.child.stdin.end();
        await Promise.all(
          racers.map((r) => new Promise((resolve) => (r.child.exitCode !== null ? resolve(undefined) : r.child.once('exit', resolve)))),
        );
      }
    });
  },
);
