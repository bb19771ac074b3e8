import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { WebRconConnectError, WebRconExecutor, type WebRconExecutorConfig } from '../../../src/protocols/webrcon/executor.js';
import { CommandRefusedError, CredentialsError, exitCodeOf, NotSentError, OutcomeUnknownError } from '../../../src/errors.js';
import { FakeWebRconServer } from '../../peers/webrcon-server.js';
import { FakeClock, flush } from '../../helpers/fake-clock.js';
import { stepClockUntil } from '../../helpers/step-clock.js';
import { waitFor } from '../../helpers/wait-for.js';

const PASSWORD = 'S3cret-rcon_pw';
const context = { id: '42', serverId: '1b4e28ba-2fa1-11d2-883f-0016d3cca427' };

function config(port: number, overrides: Partial<WebRconExecutorConfig> = {}): WebRconExecutorConfig {
  // Generous: on a loaded machine a handshake or an answer can take seconds. Deadline tests use a fake clock.
  return { type: 'webrcon', host: '127.0.0.1', port, password: PASSWORD, timeoutMs: 10_000, connectTimeoutMs: 15_000, ...overrides };
}

function executor(port: number, overrides: Partial<WebRconExecutorConfig> = {}, logger = pino({ level: 'silent' })) {
  return new WebRconExecutor(config(port, overrides), { logger, backoff: { initialMs: 20, maxMs: 100 } });
}

/** Runs `body` with a fake server and an executor, and always closes both. */
async function withServer(
  body: (server: FakeWebRconServer, rcon: WebRconExecutor) => Promise<void>,
  options: { password?: string; refuse?: 'rust' | 'http-401'; overrides?: Partial<WebRconExecutorConfig> } = {},
): Promise<void> {
  const server = await FakeWebRconServer.start({
    password: options.password ?? PASSWORD,
    ...(options.refuse ? { refuse: options.refuse } : {}),
  });
  const rcon = executor(server.port, options.overrides);
  try {
    await body(server, rcon);
  } finally {
    await rcon.close();
    await server.close();
  }
}

function rejection(promise: Promise<unknown>): Promise<Error> {
  return promise.then(
    () => assert.fail('expected a rejection'),
    (error: unknown) => error as Error,
  );
}

describe('WebRconExecutor against a fake Rust WebRCON server', () => {
  test('command round trip: JSON request with Name "porter", answer matched by Identifier', async () => {
    await withServer(async (server, rcon) => {
      await rcon.connect();
      assert.equal(rcon.isReady(), true);
      const answer = await rcon.execute('inventory.giveto 76561198000000001 rifle.ak 1', context);
      assert.equal(answer, 'ran: inventory.giveto 76561198000000001 rifle.ak 1');
      const [command, probe] = server.received;
      assert.deepEqual(command, { Identifier: 1, Message: 'inventory.giveto 76561198000000001 rifle.ak 1', Name: 'porter' });
      assert.deepEqual(probe, { Identifier: 2, Message: 'server.hostname', Name: 'porter' });
      assert.equal(await rcon.execute('echo second', context), 'second');
      assert.equal(server.received[2]?.Identifier, 3, 'identifiers keep increasing');
    });
  });

  test('broadcasts (Identifier 0, -1) and stray answers are ignored', async () => {
    await withServer(async (server, rcon) => {
      await rcon.connect();
      server.broadcast('[event] cargo ship spawned', 0);
      server.broadcast('{"Message":"hi"}', -1, 'Chat');
      // The fake also sends console output, chat and an answer to an unknown Identifier before
      // every answer: the result is the command's own answer only.
      assert.equal(await rcon.execute('echo exact answer', context), 'exact answer');
      assert.equal(await rcon.query('echo query answer'), 'query answer');
    });
  });

  test('playerlist returns the raw Message, a JSON string to parse again', async () => {
    await withServer(async (server, rcon) => {
      server.players = [
        { SteamID: '76561198000000001', DisplayName: 'Alice' },
        { SteamID: '76561198000000002', DisplayName: 'bob, the "builder"' },
      ];
      await rcon.connect();
      const message = await rcon.query('playerlist');
      assert.ok(message.startsWith('[\n'), 'Rust sends indented JSON');
      const players = JSON.parse(message) as Array<{ SteamID: string; DisplayName: string }>;
      assert.deepEqual(
        players.map((p) => [p.SteamID, p.DisplayName]),
        [
          ['76561198000000001', 'Alice'],
          ['76561198000000002', 'bob, the "builder"'],
        ],
      );
      assert.equal(server.received.length, 1, 'a query sends no probe');
    });
  });

  test('a command that prints nothing is known to have run; a multi-frame answer is kept whole', async () => {
    await withServer(
      async (_server, rcon) => {
        await rcon.connect();
        const started = Date.now();
        assert.equal(await rcon.execute('say thanks for your purchase', context), '');
        assert.ok(Date.now() - started < 30_000, 'answered by the probe, not by the 60 s timeout');
        assert.equal(await rcon.execute('multi', context), 'first part\nsecond part');
      },
      { overrides: { timeoutMs: 60_000 } },
    );
  });

  test('concurrent commands are matched to their own answers', async () => {
    await withServer(async (_server, rcon) => {
      await rcon.connect();
      const slow = rcon.execute('slow 300', context);
      const quick = rcon.execute('echo quick', context);
      const many = Promise.all(Array.from({ length: 20 }, (_, i) => rcon.execute(`echo n${i}`, context)));
      assert.equal(await quick, 'quick');
      assert.equal(await slow, 'slept 300');
      assert.deepEqual(
        await many,
        Array.from({ length: 20 }, (_, i) => `n${i}`),
      );
    });
  });

  test('a wrong password is CredentialsError (exit 78), without the password, and no retries', async () => {
    const server = await FakeWebRconServer.start({ password: 'the-right-one' });
    const rcon = executor(server.port);
    try {
      const error = await rejection(rcon.connect());
      assert.ok(error instanceof CredentialsError, String(error));
      assert.equal(exitCodeOf(error), 78);
      assert.match(error.message, /wrong rcon\.password/);
      assert.match(error.message, /ws:\/\/127\.0\.0\.1:\d+\/<password>/);
      assert.ok(!error.message.includes(PASSWORD), 'the password is not in the message');
      assert.ok(!JSON.stringify(error).includes(PASSWORD));
      assert.ok(!String(error.stack).includes(PASSWORD));
      await assert.rejects(rcon.waitReady(), CredentialsError);
      await assert.rejects(rcon.execute('echo x', context), CredentialsError);
      await assert.rejects(rcon.connect(), CredentialsError);
      assert.equal(server.refusedAttempts, 1, 'a rejected password is never tried again');
      assert.equal(rcon.isReady(), false);
    } finally {
      await rcon.close();
      await server.close();
    }
  });

  test('an HTTP 401 on the upgrade (a proxy in front) is CredentialsError too', async () => {
    const server = await FakeWebRconServer.start({ password: 'the-right-one', refuse: 'http-401' });
    const rcon = executor(server.port);
    try {
      const error = await rejection(rcon.connect());
      assert.ok(error instanceof CredentialsError, String(error));
      assert.match(error.message, /HTTP 401/);
      assert.ok(!error.message.includes(PASSWORD));
    } finally {
      await rcon.close();
      await server.close();
    }
  });

  test('the password travels literally in the path; one a URL cannot carry gets a clear hint', async () => {
    const special = "p@ss:w0rd$!(x)*+,;='&~";
    await withServer(
      async (_server, rcon) => {
        await rcon.connect();
        assert.equal(await rcon.query('echo in'), 'in');
      },
      { password: special, overrides: { password: special } },
    );

    const spaced = 'two words#x';
    const server = await FakeWebRconServer.start({ password: spaced });
    const rcon = executor(server.port, { password: spaced });
    try {
      const error = await rejection(rcon.connect());
      assert.ok(error instanceof CredentialsError);
      assert.match(error.message, /cannot carry literally/);
      assert.ok(!error.message.includes(spaced) && !error.message.includes('two%20words'));
    } finally {
      await rcon.close();
      await server.close();
    }
  });

  test('no answer within timeoutMs is OutcomeUnknownError; a silent connection is replaced', async () => {
    // Deadlines and backoff on a fake clock: the silent command times out when the test says so,
    // and a slow machine's late answer to the next command is never taken for a timeout.
    const server = await FakeWebRconServer.start({ password: PASSWORD });
    const clock = new FakeClock();
    const rcon = new WebRconExecutor(config(server.port, { timeoutMs: 300 }), {
      logger: pino({ level: 'silent' }),
      backoff: { initialMs: 20, maxMs: 100 },
      clock,
    });
    try {
      await rcon.connect();
      server.hang = true;
      const sentBefore = server.received.length;
      let settled = false;
      const pending = rejection(rcon.execute('inventory.giveto alice wood 1000', context)).finally(() => (settled = true));
      await waitFor(() => server.received.length > sentBefore, { what: 'the request to arrive' });
      clock.advance(299);
      await flush();
      assert.equal(settled, false, 'gave up before timeoutMs');
      clock.advance(1);
      const error = await pending;
      assert.ok(error instanceof OutcomeUnknownError, String(error));
      assert.match(error.message, /no answer within 300 ms/);
      assert.ok(!error.message.includes(PASSWORD));
      // Nothing at all came back since the request: porter drops that connection and reconnects.
      // The steps cover the backoff and the 1 s close grace, never the 15 s connect deadline.
      await stepClockUntil(clock, () => server.acceptedConnections >= 2, {
        maxStepMs: 1_000,
        what: 'a reconnect after the silent timeout',
      });
      server.hang = false;
      await stepClockUntil(clock, () => rcon.isReady(), { maxStepMs: 1_000, what: 'the executor ready again' });
      assert.equal(await rcon.execute('echo alive', context), 'alive');
    } finally {
      await rcon.close();
      await server.close();
    }
  });

  test('the connection dropping mid-command is OutcomeUnknownError; while down, NotSentError', async () => {
    await withServer(async (server, rcon) => {
      await rcon.connect();
      server.hang = true;
      const pending = rcon.execute('inventory.giveto alice wood 1000', context);
      await waitFor(() => server.received.length >= 1, { what: 'the request to arrive' });
      server.stallHandshakes = true;
      server.dropConnections();
      const error = await rejection(pending);
      assert.ok(error instanceof OutcomeUnknownError, String(error));
      assert.match(error.message, /ended before the answer arrived/);
      await waitFor(() => !rcon.isReady(), { what: 'the executor to notice' });
      await assert.rejects(rcon.execute('echo x', context), NotSentError);
    });
  });

  test('a server restart: reconnects with backoff and carries on', async () => {
    const first = await FakeWebRconServer.start({ password: PASSWORD });
    const port = first.port;
    const rcon = executor(port);
    let second: FakeWebRconServer | undefined;
    try {
      await rcon.connect();
      assert.equal(await rcon.execute('echo before', context), 'before');
      await first.close();
      await waitFor(() => !rcon.isReady(), { what: 'the executor to see the server go' });
      await assert.rejects(rcon.execute('echo while down', context), NotSentError);
      second = await FakeWebRconServer.start({ password: PASSWORD, port });
      await rcon.waitReady(AbortSignal.timeout(10_000));
      assert.equal(await rcon.execute('echo after', context), 'after');
      assert.equal(rcon.stats().reconnects, 1);
      assert.equal(rcon.stats().connected, true);
    } finally {
      await rcon.close();
      await second?.close();
      await first.close();
    }
  });

  test('an unreachable server is a retryable connect error, not a credentials error', async () => {
    const server = await FakeWebRconServer.start({ password: PASSWORD });
    const port = server.port;
    await server.close();
    const rcon = executor(port);
    try {
      const error = await rejection(rcon.connect());
      assert.ok(error instanceof WebRconConnectError, String(error));
      assert.equal(exitCodeOf(error), 1);
      assert.match(error.message, /ECONNREFUSED/);
    } finally {
      await rcon.close();
    }
  });

  test('a handshake that never completes times out after connectTimeoutMs', async () => {
    const server = await FakeWebRconServer.start({ password: PASSWORD });
    const clock = new FakeClock();
    const rcon = new WebRconExecutor(config(server.port, { connectTimeoutMs: 300 }), { logger: pino({ level: 'silent' }), clock });
    try {
      server.stallHandshakes = true;
      let settled = false;
      const pending = rejection(rcon.connect()).finally(() => (settled = true));
      await waitFor(() => server.stalledHandshakes >= 1, { what: 'the handshake to reach the server' });
      clock.advance(299);
      await flush();
      assert.equal(settled, false, 'gave up before connectTimeoutMs');
      clock.advance(1);
      const error = await pending;
      assert.ok(error instanceof WebRconConnectError, String(error));
      assert.match(error.message, /within 300 ms/);
    } finally {
      await rcon.close();
      await server.close();
    }
  });

  test('CR, LF and NUL are refused before sending', async () => {
    await withServer(async (server, rcon) => {
      await rcon.connect();
      for (const command of ['say hi\nquit', 'say hi\rquit', 'say hi\0']) {
        await assert.rejects(rcon.execute(command, context), CommandRefusedError);
      }
      assert.equal(server.received.length, 0);
    });
  });

  test('no log line carries the password, even at trace level', async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(chunk.toString());
        done();
      },
    });
    const logger = pino({ level: 'trace' }, sink);
    const good = await FakeWebRconServer.start({ password: PASSWORD });
    const wrong = await FakeWebRconServer.start({ password: 'other' });
    const ok = executor(good.port, {}, logger);
    const refused = executor(wrong.port, {}, logger);
    try {
      await ok.connect();
      await ok.execute('echo hi', context);
      good.dropConnections();
      await ok.waitReady(AbortSignal.timeout(10_000));
      await assert.rejects(refused.connect(), CredentialsError);
    } finally {
      await ok.close();
      await refused.close();
      await good.close();
      await wrong.close();
    }
    assert.ok(lines.length > 3, 'something was logged');
    assert.ok(
      lines.every((line) => !line.includes(PASSWORD)),
      'the password is in a log line',
    );
  });
});
