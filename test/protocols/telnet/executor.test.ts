import { after, afterEach, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { CommandRefusedError, CredentialsError, NotSentError, OutcomeUnknownError } from '../../../src/errors.js';
import { AnswerTooLargeError } from '../../../src/protocols/answer-limit.js';
import { TelnetExecutor, type TelnetExecutorConfig } from '../../../src/protocols/telnet/executor.js';
import { startTelnetServer, type FakeTelnetServer } from '../../../src/sim/faults/telnet-server.js';
import { FakeClock } from '../../helpers/fake-clock.js';
import { stepClockUntil } from '../../helpers/step-clock.js';
import { waitFor } from '../../helpers/wait-for.js';

const PASSWORD = 'telnet-Secret-9';
const silent = pino({ level: 'silent' });
const context = { id: '9007199254740993', serverId: '1b4e28ba-2fa1-11d2-883f-0016d3cca427' };

function makeExecutor(server: FakeTelnetServer, overrides: Partial<TelnetExecutorConfig> = {}, clock?: FakeClock): TelnetExecutor {
  const config: TelnetExecutorConfig = {
    type: 'telnet',
    host: '127.0.0.1',
    port: server.port,
    password: PASSWORD,
    // Generous: on a loaded machine an answer can take seconds. Deadline tests use a fake clock.
    timeoutMs: 10_000,
    connectTimeoutMs: 10_000,
    ...overrides,
  };
  return new TelnetExecutor(config, { logger: silent, backoff: { initialMs: 20, maxMs: 200 }, ...(clock ? { clock } : {}) });
}

/** Deliveries the console ran, listings and porter's end markers left out. */
const ran = (server: FakeTelnetServer) => server.executed.filter((e) => !e.query).map((e) => e.command);

describe('telnet executor against the simulated 7 Days to Die console', () => {
  let server: FakeTelnetServer;
  const executors: TelnetExecutor[] = [];
  const track = (executor: TelnetExecutor) => (executors.push(executor), executor);

  before(async () => {
    server = await startTelnetServer({ password: PASSWORD, players: ['Alice Smith'] });
  });
  afterEach(async () => {
    await Promise.all(executors.splice(0).map((e) => e.close()));
    server.setAnswerNoise(0);
    server.setHideCommandExecutionLog(0);
    server.setHandler(undefined);
  });
  after(() => server.close());

  test('logs in, runs a command and returns its output without the log echo', async () => {
    const executor = track(makeExecutor(server));
    await executor.connect();
    assert.equal(executor.isReady(), true);
    assert.equal(executor.connectedText, `telnet login to 127.0.0.1:${server.port} accepted`);
    assert.equal(await executor.execute('give "Alice Smith" casinoCoin 10', context), 'Dropped item');
    assert.deepEqual(ran(server).slice(-1), ['give "Alice Smith" casinoCoin 10']);
  });

  test('log lines from other threads between every answer line are left out, with or without HideCommandExecutionLog', async () => {
    server.join('Bob');
    const executor = track(makeExecutor(server));
    await executor.connect();
    const quiet = await executor.query('lp');
    server.setAnswerNoise(2);
    for (const level of [0, 1]) {
      server.setHideCommandExecutionLog(level);
      assert.equal(await executor.query('lp'), quiet);
    }
    assert.match(quiet, /^0\. id=\d+, Alice Smith, pos=.*\n1\. id=\d+, Bob, pos=.*\nTotal of 2 in the game$/);
    server.leave('Bob');
  });

  test('a command that prints nothing completes at once with an empty answer', async () => {
    const executor = track(makeExecutor(server));
    await executor.connect();
    assert.equal(await executor.execute('say "welcome"', context), '');
  });

  test("the console's failure lines come back as the answer", async () => {
    const executor = track(makeExecutor(server));
    await executor.connect();
    assert.equal(await executor.execute('nosuchcommand 1', context), "*** ERROR: unknown command 'nosuchcommand'");
    server.setHandler((command) => {
      if (command.startsWith('buggy')) throw new Error('Object reference not set to an instance of an object');
      return undefined;
    });
    assert.equal(
      await executor.execute('buggy Alice', context),
      "*** ERROR: Executing command 'buggy' failed: Object reference not set to an instance of an object",
    );
  });

  test('a wrong password is CredentialsError, tried once, and not retried by waitReady', async () => {
    const failures = server.authFailures;
    const executor = track(makeExecutor(server, { password: 'wrong-password' }));
    await assert.rejects(executor.connect(), (error: Error) => {
      assert.ok(error instanceof CredentialsError);
      assert.match(error.message, /TelnetPassword/);
      assert.ok(!error.message.includes('wrong-password') && !error.message.includes(PASSWORD));
      return true;
    });
    await assert.rejects(executor.waitReady(), CredentialsError);
    await assert.rejects(executor.execute('give Alice casinoCoin 1', context), CredentialsError);
    assert.equal(server.authFailures, failures + 1);
  });

  test('"Too many failed login attempts!" is CredentialsError too', async () => {
    const strict = await startTelnetServer({ password: PASSWORD, failedLoginLimit: 1 });
    try {
      const executor = track(makeExecutor(strict, { password: 'nope-nope' }));
      await assert.rejects(
        executor.connect(),
        (error: Error) => error instanceof CredentialsError && /too many failed login/.test(error.message),
      );
    } finally {
      await strict.close();
    }
  });

  test('a console without a password is never sent one', async () => {
    const open = await startTelnetServer({ password: '' });
    try {
      const executor = track(makeExecutor(open));
      await executor.connect();
      assert.equal(await executor.query('gt'), 'Day 7, 21:42');
      assert.ok(!open.executed.some((e) => e.command === PASSWORD), 'the password was run as a command');
    } finally {
      await open.close();
    }
  });

  test('CR, LF or NUL in a command, and "exit", are refused before sending', async () => {
    const executor = track(makeExecutor(server));
    await executor.connect();
    const before = server.executed.length;
    for (const command of ['give Alice casinoCoin 1\r\nshutdown', 'say a\nshutdown', 'say \0', 'exit', ' Exit ']) {
      await assert.rejects(executor.execute(command, context), CommandRefusedError);
    }
    assert.equal(server.executed.length, before);
  });

  test('while disconnected a command is NotSentError and never reaches the console', async () => {
    const down = await startTelnetServer({ password: PASSWORD });
    const executor = track(makeExecutor(down));
    await executor.connect();
    await down.down();
    await waitFor(() => !executor.isReady(), { what: 'the executor to notice the drop' });
    await assert.rejects(executor.execute('give Alice casinoCoin 1', context), NotSentError);
    await down.up();
    await executor.waitReady();
    assert.equal(await executor.query('gt'), 'Day 7, 21:42');
    assert.ok(!down.executed.some((e) => e.command.startsWith('give')));
    await down.close();
  });

  for (const fault of ['close-before-answer', 'close-after-answer', 'hang'] as const) {
    test(`${fault}: the command is OutcomeUnknownError, never sent again, and the next one runs on a new connection`, async () => {
      // Deadlines and backoff on a fake clock: the hung command times out once the console ran
      // it, and the next command's answer cannot be late on a slow machine.
      const clock = new FakeClock();
      const executor = track(makeExecutor(server, { timeoutMs: 400 }, clock));
      await executor.connect();
      server.failNext(fault);
      const command = `give "Alice Smith" casinoCoin ${fault.length}`;
      const pending = executor.execute(command, context);
      pending.catch(() => undefined);
      if (fault === 'hang') {
        await waitFor(() => ran(server).includes(command), { what: 'the console to run the command it will not answer' });
        clock.advance(400);
      }
      await assert.rejects(pending, OutcomeUnknownError);
      await stepClockUntil(clock, () => executor.isReady(), { maxStepMs: 200, what: 'the executor to reconnect after its backoff' });
      assert.equal(await executor.execute('give "Alice Smith" resourceWood 1', context), 'Dropped item');
      assert.equal(ran(server).filter((c) => c === command).length, 1);
    });
  }

  test('a command dropped on receipt is OutcomeUnknownError too (it was written), and did not run', async () => {
    const executor = track(makeExecutor(server));
    await executor.connect();
    server.failNext('close-without-running');
    await assert.rejects(executor.execute('give "Alice Smith" gunPistol 1', context), OutcomeUnknownError);
    assert.ok(!ran(server).includes('give "Alice Smith" gunPistol 1'));
  });

  test('an answer without end is cut at the cap: AnswerTooLargeError (unknown), the connection reset, then work resumes', async () => {
    const executor = track(makeExecutor(server, { timeoutMs: 10_000 }));
    await executor.connect();
    server.failNext('flood');
    await assert.rejects(executor.execute('give "Alice Smith" foodCanChili 1', context), (error: Error) => {
      assert.ok(error instanceof AnswerTooLargeError && error instanceof OutcomeUnknownError);
      return true;
    });
    await executor.waitReady();
    assert.equal(await executor.query('gt'), 'Day 7, 21:42');
    assert.ok(server.floodedBytes < 64 * 1024 * 1024, `the flood was read far past the cap: ${server.floodedBytes} bytes`);
  });

  test('a restarted console is logged in to again, and reconnects are counted', async () => {
    const executor = track(makeExecutor(server));
    await executor.connect();
    await server.restart();
    await waitFor(() => executor.stats().reconnects >= 1, { what: 'a reconnect' });
    assert.equal(await executor.query('gt'), 'Day 7, 21:42');
  });
});
