import { NotSentError } from '../../src/errors.js';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { closeSync, openSync, readdirSync } from 'node:fs';
import { pino } from 'pino';
import { ScriptExecutor } from '../../src/protocols/script/executor.js';
import { fixture } from './process-helpers.js';

/**
 * The other side: a spawn the OS refuses for the moment (here EMFILE, porter out
 * of file descriptors) is not the script's fault. The command is "not sent" and tried again, after
 * a short backoff during which the executor reports itself not ready, so the delivery loop waits
 * instead of spawning in a tight loop. Its own file: it lowers this process's open-file limit.
 */

const context = { id: '7', serverId: '1b4e28ba-2fa1-11d2-883f-0016d3cca427' };

function prlimitAvailable(): boolean {
  try {
    execFileSync('prlimit', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

test('EMFILE at spawn is NotSentError, the executor waits a backoff, then the command runs', async (t) => {
  if (process.platform !== 'linux' || !prlimitAvailable()) {
    t.skip("needs Linux and prlimit (util-linux) to lower this process's open-file limit");
    return;
  }
  const pid = String(process.pid);
  const soft = execFileSync('prlimit', ['--pid', pid, '--nofile', '--raw', '--noheadings', '--output=SOFT'], { encoding: 'utf8' }).trim();
  const script = new ScriptExecutor(
    { type: 'script', exec: [fixture('args.sh')], timeoutMs: 10_000 },
    { logger: pino({ level: 'silent' }) },
  );
  const filler: number[] = [];
  try {
    execFileSync('prlimit', ['--pid', pid, `--nofile=${readdirSync('/proc/self/fd').length + 16}:`]);
    for (;;) {
      try {
        filler.push(openSync('/dev/null', 'r'));
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'EMFILE') break;
        throw error;
      }
    }
    await assert.rejects(script.execute('give a b', context), (error: unknown) => {
      assert.ok(error instanceof NotSentError, String(error));
      assert.match(error.message, /EMFILE/);
      assert.match(error.message, /tried again shortly/);
      return true;
    });
    assert.equal(script.isReady(), false, 'not ready during the backoff: the loop waits instead of spawning again at once');
  } finally {
    for (const fd of filler) closeSync(fd);
    execFileSync('prlimit', ['--pid', pid, `--nofile=${soft}:`]);
  }
  await script.waitReady(AbortSignal.timeout(10_000));
  assert.equal(script.isReady(), true);
  assert.equal(await script.execute('give a b', context), '1\n<give a b>\n');
});
