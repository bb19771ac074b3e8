import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { ScriptExecutor, ScriptNotStartedError, type ScriptExecutorConfig } from '../../src/protocols/script/executor.js';
import { CommandFailedError, CommandRefusedError, ConfigError, NotSentError, OutcomeUnknownError } from '../../src/errors.js';
import { FakeClock, flush } from '../helpers/fake-clock.js';
import { stepClockUntil } from '../helpers/step-clock.js';
import { waitFor } from '../helpers/wait-for.js';
import { fixture, isAlive, killQuietly, readPids } from './process-helpers.js';

const logger = pino({ level: 'silent' });
const context = { id: '9223372036854775807', serverId: '1b4e28ba-2fa1-11d2-883f-0016d3cca427' };

function executor(
  exec: string[],
  options: { timeoutMs?: number; cwd?: string; env?: NodeJS.ProcessEnv; killGraceMs?: number; clock?: FakeClock } = {},
) {
  const config: ScriptExecutorConfig = { type: 'script', exec, timeoutMs: options.timeoutMs ?? 10_000 };
  return new ScriptExecutor(config, {
    logger,
    ...(options.cwd ? { cwd: options.cwd } : {}),
    ...(options.env ? { env: options.env } : {}),
    ...(options.clock ? { clock: options.clock } : {}),
    killGraceMs: options.killGraceMs ?? 500,
  });
}

/** Settles with the run's outcome, and says meanwhile whether it has settled. */
function watched<T>(run: Promise<T>): { readonly done: Promise<unknown>; readonly settled: () => boolean } {
  let settled = false;
  const done = run.then(
    (value) => ((settled = true), value),
    (error: unknown) => ((settled = true), error),
  );
  return { done, settled: () => settled };
}

let work: string;
before(async () => {
  work = await mkdtemp(path.join(tmpdir(), 'porter-script-'));
});
after(async () => {
  await rm(work, { recursive: true, force: true });
});

describe('ScriptExecutor', () => {
  test('exit 0 resolves with stdout; the command is the last argument', async () => {
    const answer = await executor([fixture('args.sh'), '--server', 'main']).execute('give alice diamond 64', context);
    assert.equal(answer, '3\n<--server>\n<main>\n<give alice diamond 64>\n');
  });

  test('hostile command text arrives as one argument, byte for byte, and nothing runs it', async () => {
    const cwd = await mkdtemp(path.join(work, 'hostile-'));
    const hostile = 'give $(touch pwned) `touch pwned2`; touch pwned3 | x && y';
    const answer = await executor([fixture('args.sh')], { cwd }).execute(hostile, context);
    assert.equal(answer, `1\n<${hostile}>\n`);
    const env = await executor([fixture('env.sh')], { cwd }).execute(hostile, context);
    assert.match(env, new RegExp(`^command=${hostile.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`, 'm'));
    assert.deepEqual(
      (await readdir(cwd)).filter((name) => name.startsWith('pwned')),
      [],
    );
  });

  test('passes PORTER_COMMAND, PORTER_COMMAND_ID, PORTER_SERVER_ID and strips porter secrets', async () => {
    const env = {
      ...process.env,
      PORTER_API_TOKEN: 'gci_secret_token_value',
      PORTER_RCON_PASSWORD: 'hunter2-secret',
      PORTER_TEST_INHERITED: 'kept',
    };
    const answer = await executor([fixture('env.sh')], { env }).execute('say hello', context);
    assert.equal(
      answer,
      [
        'command=say hello',
        `id=${context.id}`,
        `server=${context.serverId}`,
        'token=<unset>',
        'password=<unset>',
        'inherited=kept',
        '',
      ].join('\n'),
    );
    assert.doesNotMatch(answer, /gci_secret_token_value|hunter2-secret/);
  });

  test("no secret and no systemd credential variable reaches the script's environment", async () => {
    const env = {
      PATH: process.env.PATH,
      PORTER_API_TOKEN: 'gci_secret_token_value',
      PORTER_RCON_PASSWORD: 'hunter2-secret',
      PORTER_RCON_PASSWORD_LOBBY: 'lobby-secret',
      PORTER_API_TOKEN_FILE: '/run/secrets/token',
      CREDENTIALS_DIRECTORY: '/run/credentials/porter.service',
      PORTER_TEST_INHERITED: 'kept',
    };
    const printed = await executor([fixture('print-env.sh')], { env }).execute('say hello', context);
    const names = printed
      .split('\n')
      .filter(Boolean)
      .map((line) => line.slice(0, line.indexOf('=')));
    for (const name of [
      'PORTER_API_TOKEN',
      'PORTER_RCON_PASSWORD',
      'PORTER_RCON_PASSWORD_LOBBY',
      'PORTER_API_TOKEN_FILE',
      'CREDENTIALS_DIRECTORY',
    ]) {
      assert.ok(!names.includes(name), `${name} reached the script`);
    }
    assert.doesNotMatch(printed, /secret|credentials/);
    assert.match(printed, /^PORTER_TEST_INHERITED=kept$/m);
    assert.match(printed, /^PORTER_COMMAND=say hello$/m);
  });

  test('a non-zero exit fails with the status and the last 20 lines of stderr', async () => {
    const error = await executor([fixture('fail.sh')])
      .execute('3', context)
      .then(
        () => assert.fail('expected a failure'),
        (e: unknown) => e,
      );
    assert.ok(error instanceof CommandFailedError, String(error));
    assert.match(error.message, /exited with status 3/);
    assert.match(error.message, /problem line 30$/);
    assert.match(error.message, /problem line 11\n/);
    assert.doesNotMatch(error.message, /problem line 10\n/);
    assert.ok(error.message.length < 2600, `message is ${error.message.length} chars`);
  });

  test('CR, LF and NUL are refused before anything is started', async () => {
    const cwd = await mkdtemp(path.join(work, 'refused-'));
    for (const command of ['say a\nop eve', 'say a\rop eve', 'say a\0b']) {
      await assert.rejects(executor([fixture('hang.sh')], { cwd }).execute(command, context), CommandRefusedError);
    }
    assert.deepEqual(await readdir(cwd), []);
  });

  test('a missing executable fails at once as not started, naming the file, the errno and what to do', async () => {
    const missing = path.join(work, 'no-such-script');
    await assert.rejects(executor([missing]).execute('give a b', context), (error: unknown) => {
      assert.ok(error instanceof ScriptNotStartedError, String(error));
      assert.ok(error instanceof CommandRefusedError, 'the delivery loop fails it at once, never retries it');
      assert.equal(error.code, 'E_SCRIPT_NOT_STARTED');
      assert.match(error.message, /no-such-script/);
      assert.match(error.message, /ENOENT/);
      assert.match(error.message, /servers\[\]\.executor\.exec\[0\]/);
      assert.match(error.message, /not run/);
      assert.doesNotMatch(error.message, /game server/);
      return true;
    });
    await assert.rejects(executor([missing]).connect(), ConfigError);
  });

  test('a file without the executable bit fails at once (EACCES)', async () => {
    await assert.rejects(executor([fixture('not-executable.sh')]).execute('give a b', context), (error: unknown) => {
      assert.ok(error instanceof ScriptNotStartedError, String(error));
      assert.match(error.message, /EACCES/);
      return true;
    });
    await assert.rejects(executor([fixture('not-executable.sh')]).connect(), ConfigError);
    await executor([fixture('args.sh')]).connect();
    await executor(['sh']).connect();
  });

  test('a folder, a path through a file, or a missing "#!" interpreter fail at once with their errno', async () => {
    const missingInterpreter = path.join(work, 'bad-interpreter.sh');
    await writeFile(missingInterpreter, '#!/nonexistent/interpreter\n', { mode: 0o755 });
    for (const [exec, errno] of [
      [work, /EACCES/],
      [path.join(fixture('args.sh'), 'inside'), /ENOTDIR/],
      [missingInterpreter, /ENOENT \(no such file, or a "#!" interpreter it names is missing\)/],
    ] as const) {
      const script = executor([exec]);
      await assert.rejects(script.execute('give a b', context), (error: unknown) => {
        assert.ok(error instanceof ScriptNotStartedError, `${exec}: ${String(error)}`);
        assert.match(error.message, errno);
        return true;
      });
      assert.equal(script.isReady(), true, 'a file that cannot run is not a reason to wait: each command fails at once');
    }
  });

  test('a command too long for an argument (E2BIG) fails at once, saying how long it is', async () => {
    const command = `say ${'x'.repeat(200 * 1024)}`;
    await assert.rejects(executor([fixture('args.sh')]).execute(command, context), (error: unknown) => {
      assert.ok(error instanceof ScriptNotStartedError, String(error));
      assert.match(error.message, /E2BIG/);
      assert.match(error.message, new RegExp(`the command is ${Buffer.byteLength(command)} bytes`));
      assert.ok(error.message.length < 1000, 'the command text itself is not in the reason');
      return true;
    });
  });

  // The timeouts below run on a fake clock, moved once the script has written its pid file: a
  // slow machine cannot time a script out before it started, or before it set its SIGTERM trap.
  test('a timeout kills the whole process group and is OutcomeUnknownError', async () => {
    const pidfile = path.join(work, 'hang.pid');
    const clock = new FakeClock();
    // A kill grace the clock never reaches: the script must end by the SIGTERM alone.
    const run = watched(executor([fixture('hang.sh')], { timeoutMs: 300, killGraceMs: 60_000, clock }).execute(pidfile, context));
    const pids = await readPids(pidfile);
    try {
      clock.advance(299);
      await flush();
      assert.equal(run.settled(), false, 'stopped before timeoutMs');
      clock.advance(1);
      // On over the 250 ms stdio grace only.
      await stepClockUntil(clock, run.settled, { maxStepMs: 250, what: 'the timed-out script to be stopped' });
      await assert.rejects(
        run.done.then((outcome) => Promise.reject(outcome)),
        (error: unknown) => {
          assert.ok(error instanceof OutcomeUnknownError, String(error));
          assert.match(error.message, /did not finish within 300 ms/);
          assert.match(error.message, /SIGTERM/);
          return true;
        },
      );
      assert.throws(() => process.kill(pids.leader, 0), { code: 'ESRCH' });
      await waitFor(() => !isAlive(pids.child), { what: "the script's child was killed with it" });
    } finally {
      killQuietly(pids.child);
    }
  });

  test('a group that ignores SIGTERM is killed with SIGKILL after the grace period', async () => {
    const pidfile = path.join(work, 'stubborn.pid');
    const clock = new FakeClock();
    const run = watched(executor([fixture('stubborn.sh')], { timeoutMs: 300, killGraceMs: 300, clock }).execute(pidfile, context));
    const pids = await readPids(pidfile);
    try {
      clock.advance(300);
      await waitFor(() => clock.nextWakeAt === clock.now() + 300, { what: 'the SIGTERM and its kill grace' });
      clock.advance(300);
      // On over the 250 ms stdio grace only, not the bound on the SIGKILL (another 300 ms).
      await stepClockUntil(clock, run.settled, { maxStepMs: 250, what: 'the stubborn script to be killed' });
      await assert.rejects(
        run.done.then((outcome) => Promise.reject(outcome)),
        (error: unknown) => {
          assert.ok(error instanceof OutcomeUnknownError, String(error));
          assert.match(error.message, /SIGKILL/);
          return true;
        },
      );
      assert.throws(() => process.kill(pids.leader, 0), { code: 'ESRCH' });
      await waitFor(() => !isAlive(pids.child), { what: "the script's child to be killed with its group" });
    } finally {
      killQuietly(pids.leader);
      killQuietly(pids.child);
    }
  });

  test('a background child that outlives the script does not hold the answer back', async () => {
    const pidfile = path.join(work, 'fork.pid');
    let pids: { leader: number; child: number } | undefined;
    try {
      // On a fake clock: once the script exits, only the 250 ms stdio grace may pass, never the timeout.
      const clock = new FakeClock();
      const started = clock.now();
      const run = watched(executor([fixture('fork.sh')], { timeoutMs: 20_000, clock }).execute(pidfile, context));
      pids = await readPids(pidfile);
      await stepClockUntil(clock, run.settled, { maxStepMs: 250, what: 'the answer of the script that exited' });
      const elapsed = clock.now() - started;
      assert.equal(await run.done, 'delivered\n');
      assert.ok(elapsed <= 250, `took ${elapsed} ms (fake clock) although the script exited at once`);
      assert.equal(isAlive(pids.child), true, 'a clean exit leaves what the script started alone');
    } finally {
      killQuietly(pids?.child);
    }
  });

  test('megabytes of output cost a bounded capture', async (t) => {
    let peak = 0;
    const base = process.memoryUsage();
    const sampler = setInterval(() => {
      const now = process.memoryUsage();
      peak = Math.max(peak, now.rss - base.rss);
    }, 5);
    try {
      const answer = await executor([fixture('flood.sh')], { timeoutMs: 60_000 }).execute('0', context);
      assert.ok(answer.length <= 64 * 1024, `answer is ${answer.length} chars`);
      assert.ok(answer.endsWith('\nstdout-end\n'));
      assert.match(answer, /^o+\nstdout-end\n$/);
      const failure = await executor([fixture('flood.sh')], { timeoutMs: 60_000 })
        .execute('4', context)
        .then(
          () => assert.fail('expected a failure'),
          (e: unknown) => e,
        );
      assert.ok(failure instanceof CommandFailedError);
      assert.match(failure.message, /status 4/);
      assert.match(failure.message, /stderr-end$/);
      assert.ok(failure.message.length <= 2300, `message is ${failure.message.length} chars`);
    } finally {
      clearInterval(sampler);
    }
    t.diagnostic(`64 MiB streamed per run; peak RSS growth ${(peak / 1048576).toFixed(1)} MiB`);
    // Holding the output would need 128 MiB; garbage not yet collected accounts for the rest.
    assert.ok(peak < 100 * 1024 * 1024, `RSS grew by ${peak} bytes while 128 MiB went through the pipes`);
  });

  test('query is refused: a script has no console', async () => {
    await assert.rejects(executor([fixture('args.sh')]).query('list'), CommandRefusedError);
  });

  test('close stops a running script, outcome unknown', async () => {
    const pidfile = path.join(work, 'close.pid');
    const script = executor([fixture('hang.sh')], { timeoutMs: 60_000 });
    const run = script.execute(pidfile, context);
    const pids = await readPids(pidfile);
    try {
      await script.close();
      await assert.rejects(run, OutcomeUnknownError);
      await waitFor(() => !isAlive(pids.child), { what: "the script's child to be killed with its group" });
      await assert.rejects(script.execute('x', context), NotSentError);
    } finally {
      killQuietly(pids.child);
    }
  });
});
