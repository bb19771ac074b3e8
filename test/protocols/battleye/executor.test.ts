import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { BattlEyeExecutor, type BattlEyeExecutorConfig, type BattlEyeExecutorDeps } from '../../../src/protocols/battleye/executor.js';
import { BattlEyeConnectError } from '../../../src/protocols/battleye/errors.js';
import { AnswerTooLargeError } from '../../../src/protocols/answer-limit.js';
import { CommandRefusedError, CredentialsError, exitCodeOf, NotSentError, OutcomeUnknownError } from '../../../src/errors.js';
import { startBattlEyeServer, type BattlEyeServerOptions, type FakeBattlEyeServer } from '../../../src/sim/faults/battleye-server.js';
import { simEchoText, simWideText } from '../../../src/sim/rcon-answers.js';
import { FakeClock } from '../../helpers/fake-clock.js';
import { waitFor } from '../../helpers/wait-for.js';

const PASSWORD = 'be-Rcon-pw-7Kq2';
const context = { id: '9007199254740993', serverId: '1b4e28ba-2fa1-11d2-883f-0016d3cca427' };

function config(port: number, overrides: Partial<BattlEyeExecutorConfig> = {}): BattlEyeExecutorConfig {
  // A roomy deadline on the real clock: a loaded machine must not turn a slow answer into a lost one.
  return { type: 'battleye', host: '127.0.0.1', port, password: PASSWORD, timeoutMs: 10_000, connectTimeoutMs: 10_000, ...overrides };
}

interface Bed {
  readonly server: FakeBattlEyeServer;
  readonly porter: BattlEyeExecutor;
}

async function withBed(
  body: (bed: Bed) => Promise<void>,
  options: { server?: Partial<BattlEyeServerOptions>; config?: Partial<BattlEyeExecutorConfig>; deps?: Partial<BattlEyeExecutorDeps> } = {},
): Promise<void> {
  const server = await startBattlEyeServer({ password: PASSWORD, players: ['Survivor'], ...options.server });
  const porter = new BattlEyeExecutor(config(server.port, options.config), {
    logger: pino({ level: 'silent' }),
    backoff: { initialMs: 20, maxMs: 100 },
    ...options.deps,
  });
  try {
    await body({ server, porter });
  } finally {
    await porter.close();
    await server.close();
  }
}

function rejection(promise: Promise<unknown>): Promise<Error> {
  return promise.then(
    () => assert.fail('expected a rejection'),
    (error: unknown) => error as Error,
  );
}

/**
 * Porter and the simulator on one fake clock. The login deadline is far off: loggedInAgain moves
 * the clock 100 ms a step while a login is under way, and a login slowed by a loaded machine must
 * not time out in fake time.
 */
function onFakeClock(clock: FakeClock): {
  server: Partial<BattlEyeServerOptions>;
  config: Partial<BattlEyeExecutorConfig>;
  deps: Partial<BattlEyeExecutorDeps>;
} {
  return { server: { clock }, config: { timeoutMs: 2000, connectTimeoutMs: 60_000 }, deps: { clock } };
}

/**
 * Waits for a new login, moving the fake clock along so the reconnect backoff passes. Counts the
 * reconnect rather than watching for a moment without a session: a login answered at once leaves
 * no such moment to see.
 */
function loggedInAgain(porter: BattlEyeExecutor, clock: FakeClock): Promise<true> {
  return waitFor(
    () => {
      if (porter.stats().reconnects === 1 && porter.isReady()) return true;
      clock.advance(100);
      return false;
    },
    { what: 'porter to give up on the session and log in again' },
  );
}

const ran = (server: FakeBattlEyeServer, command: string) => server.executed.filter((entry) => entry.command === command).length;

describe('BattlEyeExecutor against the simulated BattlEye server', () => {
  test('logs in, runs a command, reads players', async () => {
    await withBed(async ({ server, porter }) => {
      await porter.connect();
      assert.equal(porter.isReady(), true);
      assert.match(porter.connectedText, /BattlEye RCon login to 127\.0\.0\.1:\d+ \(UDP\) accepted/);
      assert.equal(await porter.execute('say -1 Thanks for supporting the server!', context), '');
      assert.match(await porter.query('players'), /^Players on server:[\s\S]*\(OK\) Survivor\n\(1 players in total\)$/);
      assert.deepEqual(
        server.executed.map((entry) => [entry.command, entry.query]),
        [
          ['say -1 Thanks for supporting the server!', false],
          ['players', true],
        ],
      );
      await waitFor(() => server.unacknowledged === 0, { what: 'porter to acknowledge the login and say messages' });
    });
  });

  test('a wrong password is a CredentialsError (exit 78) that names the setting, never the password, and stops logging in', async () => {
    await withBed(
      async ({ server, porter }) => {
        const error = await rejection(porter.connect());
        assert.ok(error instanceof CredentialsError);
        assert.equal(exitCodeOf(error), 78);
        assert.match(error.message, /rejected the password/);
        assert.match(error.message, /RConPassword/);
        assert.ok(!error.message.includes('not-the-password') && !error.message.includes(PASSWORD));
        assert.ok((await rejection(porter.waitReady())) instanceof CredentialsError);
        assert.equal(server.stats.authFailures, 1, 'no second attempt');
      },
      { config: { password: 'not-the-password' } },
    );
  });

  test('no answer to the login means RCon is off or the port is wrong: a connect error that says where to look', async () => {
    await withBed(
      async ({ server, porter }) => {
        const error = await rejection(porter.connect());
        assert.ok(error instanceof BattlEyeConnectError, String(error));
        assert.match(error.message, /did not answer the login within 300 ms/);
        assert.match(error.message, /BEServer_x64\.cfg/);
        assert.equal(server.stats.unansweredLogins, 1);
      },
      { server: { password: '' }, config: { connectTimeoutMs: 300 } },
    );
  });

  test('nothing listening on the port: a connect error, retried, not a credentials error', async () => {
    const server = await startBattlEyeServer({ password: PASSWORD });
    const port = server.port;
    await server.close();
    const porter = new BattlEyeExecutor(config(port, { connectTimeoutMs: 1000 }), { logger: pino({ level: 'silent' }) });
    try {
      const error = await rejection(porter.connect());
      assert.ok(error instanceof BattlEyeConnectError, String(error));
      assert.match(error.message, /nothing listens|did not answer/);
    } finally {
      await porter.close();
    }
  });

  test('an answer split into parts arrives whole: in order, reversed, each part twice', async () => {
    await withBed(async ({ server, porter }) => {
      await porter.connect();
      assert.equal(await porter.execute('porter-sim echo 5000', context), simEchoText(5000));
      server.setPartOrder('reversed');
      assert.equal(await porter.execute('porter-sim echo 4321', context), simEchoText(4321));
      server.setPartOrder('duplicated');
      assert.equal(await porter.execute('porter-sim unicode 900', context), simWideText(900), 'three-byte characters split between parts');
      await waitFor(() => porter.traffic().ignoredAnswers === 3, { what: 'the three repeated parts to be ignored, not appended' });
    });
  });

  test('an answer that never comes is unknown, never resent; an empty command finds the session alive and the next command runs on the same login', async () => {
    const clock = new FakeClock();
    await withBed(async ({ server, porter }) => {
      await porter.connect();
      server.failNext('drop-answer');
      const give = porter.execute('#give Survivor AKM', context);
      await waitFor(() => ran(server, '#give Survivor AKM') === 1, { what: 'the command to run' });
      clock.advance(2000);
      const error = await rejection(give);
      assert.ok(error instanceof OutcomeUnknownError && !(error instanceof NotSentError), String(error));
      assert.match(error.message, /no answer within 2000 ms[\s\S]*not sent again/);
      assert.equal(porter.traffic().rechecks, 1, 'an empty command checks the session');
      assert.equal(await porter.execute('say -1 next', context), '');
      assert.equal(ran(server, '#give Survivor AKM'), 1, 'the unanswered command was never sent again');
      assert.equal(server.stats.logins, 1, 'no new login: BattlEye would announce it to every admin');
      assert.deepEqual(
        server.executed.map((entry) => entry.client),
        [1, 1],
        'the next command ran on the same session',
      );
      assert.equal(porter.stats().reconnects, 0);
    }, onFakeClock(clock));
  });

  test('a command lost on the way in is unknown too: porter cannot tell, does not resend, and keeps the session', async () => {
    const clock = new FakeClock();
    await withBed(async ({ server, porter }) => {
      await porter.connect();
      server.failNext('drop-command');
      const give = porter.execute('#give Survivor Apple', context);
      await waitFor(() => server.stats.ignored === 1, { what: 'the command to be lost' });
      clock.advance(2000);
      assert.ok((await rejection(give)) instanceof OutcomeUnknownError);
      assert.equal(await porter.execute('say -1 after', context), '');
      assert.equal(ran(server, '#give Survivor Apple'), 0);
      assert.equal(server.stats.logins, 1);
    }, onFakeClock(clock));
  });

  test('a server gone silent after running a command: the command is unknown, the empty command after it goes unanswered too, porter logs in again and never resends it', async () => {
    const clock = new FakeClock();
    await withBed(async ({ server, porter }) => {
      await porter.connect();
      await waitFor(() => server.unacknowledged === 0 && server.stats.acks === 1, { what: 'the login message to be acknowledged' });
      server.setHandler((command) => {
        if (command === '#give Survivor Truck') server.silent(true);
        return undefined;
      });
      const give = porter.execute('#give Survivor Truck', context);
      await waitFor(() => ran(server, '#give Survivor Truck') === 1, { what: 'the command to run' });
      clock.advance(2000);
      assert.ok((await rejection(give)) instanceof OutcomeUnknownError);
      await waitFor(() => server.stats.ignored === 1, { what: 'the empty command to reach the silent server' });
      assert.equal(porter.isReady(), true, 'one missing answer is not a lost session');
      // The check went unheard; the server speaks again before porter gives up on it, so the new login is
      // answered (a login sent to the silent server would wait out its deadline on the fake clock).
      server.silent(false);
      clock.advance(2000);
      await loggedInAgain(porter, clock);
      assert.equal(await porter.execute('say -1 back', context), '');
      assert.equal(ran(server, '#give Survivor Truck'), 1, 'the unanswered command was never sent again');
      assert.equal(server.stats.logins, 2);
      assert.equal(server.executed.at(-1)?.client, 2);
    }, onFakeClock(clock));
  });

  test('a command waiting while the session is checked is sent only once the check is answered', async () => {
    const clock = new FakeClock();
    await withBed(async ({ server, porter }) => {
      await porter.connect();
      server.failNext('drop-answer');
      const give = porter.execute('#give Survivor Axe', context);
      await waitFor(() => ran(server, '#give Survivor Axe') === 1, { what: 'the command to run' });
      server.failNext('drop-command', 'empty command');
      clock.advance(2000);
      assert.ok((await rejection(give)) instanceof OutcomeUnknownError);
      await waitFor(() => server.stats.ignored === 1, { what: 'the empty command to be lost' });
      // The next delivery waits for the check: the check went unanswered, so the session is replaced first.
      const next = porter.execute('say -1 waiting', context);
      clock.advance(2000);
      assert.ok((await rejection(next)) instanceof NotSentError);
      assert.equal(ran(server, 'say -1 waiting'), 0);
      await loggedInAgain(porter, clock);
      assert.equal(await porter.execute('say -1 waiting', context), '');
      assert.equal(server.stats.logins, 2);
    }, onFakeClock(clock));
  });

  test('the game server going down and coming back: not sent while down (the probe finds out), delivering again once it is up', async () => {
    await withBed(
      async ({ server, porter }) => {
        await porter.connect();
        assert.equal(await porter.execute('say -1 before', context), '');
        await server.down();
        const during = await rejection(porter.execute('say -1 during', context));
        assert.ok(during instanceof NotSentError, String(during));
        await waitFor(() => !porter.isReady(), { what: 'porter to notice the server is gone' });
        assert.ok((await rejection(porter.execute('say -1 while down', context))) instanceof NotSentError);
        await server.up();
        await porter.waitReady(AbortSignal.timeout(10_000));
        assert.equal(await porter.execute('say -1 after', context), '');
        assert.equal(ran(server, 'say -1 during'), 0);
        assert.equal(ran(server, 'say -1 after'), 1);
        assert.ok(porter.stats().reconnects >= 1);
      },
      // Should the kernel not report the closed port, the probe and the check after it time out: within waitFor's bound.
      { config: { timeoutMs: 2000 } },
    );
  });

  test('a server that forgot porter (restarted, or dropped it): the probe goes unanswered, the command is not sent, then runs once', async () => {
    const clock = new FakeClock();
    await withBed(async ({ server, porter }) => {
      await porter.connect();
      await waitFor(() => server.unacknowledged === 0 && server.stats.acks === 1, { what: 'the login message to be acknowledged' });
      server.dropClients();
      const give = porter.execute('#give Survivor Rifle', context);
      await waitFor(() => server.stats.ignored === 1, { what: 'the probe to reach the server that forgot porter' });
      clock.advance(2000);
      const error = await rejection(give);
      assert.ok(error instanceof NotSentError, String(error));
      assert.match(error.message, /did not answer the empty command porter sends before each delivery[\s\S]*not sent/);
      await waitFor(() => server.stats.ignored === 2, { what: 'the empty command that checks the session to reach the server' });
      clock.advance(2000);
      await loggedInAgain(porter, clock);
      assert.equal(await porter.execute('#give Survivor Rifle', context), '');
      assert.equal(ran(server, '#give Survivor Rifle'), 1);
    }, onFakeClock(clock));
  });

  test('an empty command every 30 s keeps the login alive past BattlEye’s 45 s', async () => {
    const clock = new FakeClock();
    await withBed(async ({ server, porter }) => {
      await porter.connect();
      for (let second = 10; second <= 100; second += 10) {
        clock.advance(10_000);
        // Porter's side, not the server's: the clock must not pass a keepalive's deadline before its answer is in.
        const expected = Math.floor(second / 30);
        await waitFor(() => porter.traffic().answeredKeepalives === expected, { what: `keepalives answered after ${second} s` });
      }
      assert.equal(porter.traffic().keepalives, 3);
      assert.equal(server.stats.keepalives, 3);
      assert.equal(await porter.execute('say -1 still here', context), '');
      assert.equal(server.stats.droppedClients, 0);
      assert.equal(server.stats.logins, 1);
      assert.equal(porter.traffic().rechecks, 0);
    }, onFakeClock(clock));
  });

  test('a keepalive whose answer is lost: the empty command after it is answered and the login stays', async () => {
    const clock = new FakeClock();
    await withBed(async ({ server, porter }) => {
      await porter.connect();
      server.failNext('drop-answer', 'empty command');
      clock.advance(30_000);
      await waitFor(() => server.stats.keepalives === 1, { what: 'the keepalive to reach the server' });
      clock.advance(2000);
      await waitFor(() => server.stats.keepalives === 2, { what: 'the empty command that checks the session' });
      assert.equal(await porter.execute('say -1 still here', context), '');
      assert.equal(porter.traffic().rechecks, 1);
      assert.equal(server.stats.logins, 1);
      assert.equal(porter.stats().reconnects, 0);
    }, onFakeClock(clock));
  });

  test('a server gone silent is noticed by the unanswered keepalive and the unanswered check after it, and porter logs in again when it speaks', async () => {
    const clock = new FakeClock();
    await withBed(async ({ server, porter }) => {
      await porter.connect();
      await waitFor(() => server.unacknowledged === 0 && server.stats.acks === 1, { what: 'the login message to be acknowledged' });
      server.silent(true);
      clock.advance(30_000);
      await waitFor(() => server.stats.ignored === 1, { what: 'the keepalive to reach the silent server' });
      clock.advance(2000);
      await waitFor(() => server.stats.ignored === 2, { what: 'the check after the unanswered keepalive' });
      assert.equal(porter.traffic().rechecks, 1);
      assert.equal(porter.isReady(), true);
      // Both went unheard; the server speaks again before porter gives up on it, so the new login is answered.
      server.silent(false);
      clock.advance(2000);
      await loggedInAgain(porter, clock);
      assert.equal(await porter.execute('say -1 back', context), '');
      assert.equal(server.stats.logins, 2);
    }, onFakeClock(clock));
  });

  test('a flood of server messages: every one acknowledged, none kept, deliveries go on', async () => {
    await withBed(async ({ server, porter }) => {
      await porter.connect();
      for (let round = 0; round < 10; round += 1) {
        for (let i = 0; i < 100; i += 1) server.broadcast(`(Global) Spammer: message ${round}-${i}`);
        assert.equal(await porter.execute(`say -1 delivery ${round}`, context), '');
      }
      await waitFor(() => server.unacknowledged === 0, { what: 'every message acknowledged' });
      assert.equal(server.stats.droppedClients, 0);
      assert.ok(porter.traffic().messages >= 1000, `acknowledged ${porter.traffic().messages}`);
      for (let round = 0; round < 10; round += 1) assert.equal(ran(server, `say -1 delivery ${round}`), 1);
    });
  });

  test('sequence numbers are one byte: past 255 they wrap, and every answer still goes to its own command', async () => {
    await withBed(async ({ server, porter }) => {
      await porter.connect();
      for (let n = 0; n < 300; n += 1) assert.equal(await porter.query(`porter-sim echo ${n % 40}`), simEchoText(n % 40), `command ${n}`);
      assert.equal(server.stats.logins, 1, 'all on one login');
      assert.equal(server.executed.length, 300);
    });
  });

  test('refused before sending: CR/LF, and a command no datagram can carry', async () => {
    await withBed(async ({ server, porter }) => {
      await porter.connect();
      assert.ok((await rejection(porter.execute('say -1 hi\n#shutdown', context))) instanceof CommandRefusedError);
      assert.ok((await rejection(porter.execute(`say -1 ${'x'.repeat(70_000)}`, context))) instanceof CommandRefusedError);
      assert.equal(server.executed.length, 0);
    });
  });

  test('not logged in: NotSentError, nothing sent', async () => {
    await withBed(async ({ server, porter }) => {
      assert.ok((await rejection(porter.execute('say -1 early', context))) instanceof NotSentError);
      assert.equal(server.executed.length, 0);
    });
  });

  test('an answer over the cap fails as unknown and the connection is replaced', async () => {
    await withBed(
      async ({ server, porter }) => {
        await porter.connect();
        const error = await rejection(porter.execute('porter-sim echo 9000', context));
        assert.ok(error instanceof AnswerTooLargeError, String(error));
        await porter.waitReady();
        assert.equal(await porter.execute('say -1 small', context), '');
        assert.equal(server.stats.logins, 2);
      },
      { deps: { maxAnswerBytes: 4096 } },
    );
  });
});
