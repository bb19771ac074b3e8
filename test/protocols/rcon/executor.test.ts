import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { CommandRefusedError, CredentialsError, NotSentError, OutcomeUnknownError } from '../../../src/errors.js';
import { RconConnectError } from '../../../src/protocols/rcon/errors.js';
import { startRconServer, type FakeRconServer } from '../../../src/sim/faults/rcon-server.js';
import { RconExecutor } from '../../../src/protocols/rcon/executor.js';
import { FakeClock, flush } from '../../helpers/fake-clock.js';
import { stepClockUntil } from '../../helpers/step-clock.js';
import { waitFor } from '../../helpers/wait-for.js';
import { context, executorConfig, makeExecutor, PASSWORD, silent } from './helpers/setup.js';

const deliveries = (server: FakeRconServer) => server.executed.filter((entry) => !entry.query).map((entry) => entry.command);

describe('RconExecutor on a Minecraft server', () => {
  let server: FakeRconServer;
  before(async () => {
    server = await startRconServer({ password: PASSWORD, flavour: 'minecraft', players: ['Steve', 'Alex'] });
  });
  after(() => server.close());

  test('runs a delivery and a query, and says what its connection proved and its stats', async () => {
    const executor = makeExecutor(server);
    try {
      assert.match(executor.connectedText, /^RCON \(minecraft\) login to 127\.0\.0\.1:\d+ accepted$/);
      assert.equal(executor.isReady(), false);
      await executor.connect();
      assert.equal(executor.isReady(), true);
      assert.equal(await executor.execute('give Steve diamond 64', context), 'Gave 64 [Diamond] to Steve');
      assert.equal(await executor.execute('give Herobrine diamond', context), 'No player was found');
      assert.equal(await executor.query('list'), 'There are 2 of a max of 20 players online: Steve, Alex');
      assert.deepEqual(executor.stats(), { connected: true, reconnects: 0 });
    } finally {
      await executor.close();
    }
    assert.equal(executor.isReady(), false);
  });

  test('a delivery is announced at debug with its id and the RCON address, never its text', async () => {
    const lines: Array<Record<string, unknown>> = [];
    const logger = pino({ level: 'debug' }, { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) });
    const executor = new RconExecutor(executorConfig(server), { logger });
    try {
      await executor.connect();
      await executor.execute('give Steve diamond 64', context);
      assert.deepEqual(
        lines.filter((line) => line.event === 'command.sending').map(({ id, executor, address, msg }) => ({ id, executor, address, msg })),
        [{ id: context.id, executor: 'rcon', address: `127.0.0.1:${server.port}`, msg: 'sending command over RCON' }],
      );
      assert.ok(!JSON.stringify(lines).includes('diamond'));
    } finally {
      await executor.close();
    }
  });

  test('a 1,447-byte request is refused before sending; the connection stays up and 1,446 bytes still go through', async () => {
    const executor = makeExecutor(server);
    try {
      await executor.connect();
      const connectionsBefore = server.totalConnections;
      const ranBefore = server.executed.length;
      const tooLong = `say ${'x'.repeat(1447 - 4)}`;
      assert.equal(Buffer.byteLength(tooLong), 1447);
      await assert.rejects(executor.execute(tooLong, context), (error: unknown) => {
        assert.ok(error instanceof CommandRefusedError, String(error));
        assert.match(error.message, /1447 bytes/);
        assert.match(error.message, /limit of 1446 bytes/);
        return true;
      });
      assert.equal(server.executed.length, ranBefore, 'nothing reached the server');
      assert.equal(executor.isReady(), true);
      // Multi-byte characters count as bytes, not characters.
      await assert.rejects(executor.execute(`say ${'é'.repeat(722)}`, context), CommandRefusedError);

      const longest = `say ${'x'.repeat(1446 - 4)}`;
      assert.equal(await executor.execute(longest, context), '');
      assert.equal(server.executed.at(-1)?.command, longest);
      assert.equal(server.totalConnections, connectionsBefore, 'the same connection carried on');
      assert.equal(server.framingViolations, 0);
    } finally {
      await executor.close();
    }
  });

  test('CR, LF and NUL are refused before sending', async () => {
    const executor = makeExecutor(server);
    try {
      await executor.connect();
      const ranBefore = server.executed.length;
      for (const command of ['give Steve diamond\nop Steve', 'say hi\rstop', 'say a\0op Steve']) {
        await assert.rejects(executor.execute(command, context), CommandRefusedError);
      }
      assert.equal(server.executed.length, ranBefore);
      assert.equal(executor.isReady(), true);
    } finally {
      await executor.close();
    }
  });

  test('a refused command fails at once even while disconnected', async () => {
    const executor = makeExecutor(server, { port: 1 });
    try {
      await assert.rejects(executor.execute('a\nb', context), CommandRefusedError);
    } finally {
      await executor.close();
    }
  });

  test('a timed-out command is OutcomeUnknownError, never resent, and the next one uses a fresh connection', async () => {
    // Deadlines and backoff on a fake clock: the hung command times out when the test says so,
    // and no answer from a slow machine can be mistaken for a timeout.
    const clock = new FakeClock();
    const executor = new RconExecutor(executorConfig(server, { timeoutMs: 2000 }), {
      logger: silent,
      backoff: { initialMs: 20, maxMs: 200 },
      clock,
    });
    try {
      await executor.connect();
      const connectionsBefore = server.totalConnections;
      const ranBefore = deliveries(server).length;
      server.failNext('hang');
      let settled = false;
      const hung = executor.execute('give Steve emerald', context);
      hung.then(
        () => (settled = true),
        () => (settled = true),
      );
      await waitFor(() => deliveries(server).length > ranBefore, { what: 'the server to run the command it will not answer' });
      clock.advance(1999);
      await flush();
      assert.equal(settled, false, 'gave up on the command before its 2 s timeout');
      clock.advance(1);
      await assert.rejects(hung, OutcomeUnknownError);
      await stepClockUntil(clock, () => executor.isReady(), { maxStepMs: 200, what: 'the executor to reconnect after its backoff' });
      assert.equal(await executor.execute('give Steve stick', context), 'Gave 1 [Stick] to Steve');
      assert.equal(server.totalConnections, connectionsBefore + 1);
      assert.deepEqual(deliveries(server).slice(ranBefore), ['give Steve emerald', 'give Steve stick']);
      assert.equal(executor.stats().reconnects, 1);
    } finally {
      await executor.close();
    }
  });

  test('concurrent execute() calls are serialised: never two requests in flight', async () => {
    const executor = makeExecutor(server);
    try {
      await executor.connect();
      const answers = await Promise.all(
        Array.from({ length: 8 }, (_, i) => executor.execute(`porter-sim delay ${5 + (i % 3) * 10} answer-${i}`, context)),
      );
      assert.deepEqual(
        answers,
        Array.from({ length: 8 }, (_, i) => `answer-${i}`),
      );
      assert.equal(server.maxInFlight, 1);
      assert.equal(server.framingViolations, 0);
    } finally {
      await executor.close();
    }
  });

  test('a command cancelled while queued is NotSentError and never reaches the server', async () => {
    const executor = makeExecutor(server);
    try {
      await executor.connect();
      const ranBefore = server.executed.length;
      const first = executor.execute('porter-sim delay 100 first', context);
      const controller = new AbortController();
      const second = executor.execute('give Steve cake', context, controller.signal);
      controller.abort(new Error('stop'));
      await assert.rejects(second, NotSentError);
      assert.equal(await first, 'first');
      assert.deepEqual(
        server.executed.slice(ranBefore).map((e) => e.command),
        ['porter-sim delay 100 first'],
      );
    } finally {
      await executor.close();
    }
  });
});

describe('RconExecutor when the game server goes away', () => {
  test('server restart: reconnects and logs in again by itself', async () => {
    const server = await startRconServer({ password: PASSWORD, players: ['Steve'] });
    const executor = makeExecutor(server);
    try {
      await executor.connect();
      await server.restart();
      await waitFor(() => executor.stats().reconnects === 1 && executor.isReady(), { what: 'reconnect after restart' });
      assert.equal(await executor.execute('give Steve apple', context), 'Gave 1 [Apple] to Steve');
      assert.equal(server.totalConnections, 2);
    } finally {
      await executor.close();
      await server.close();
    }
  });

  test('while the server is down, execute() fails fast with NotSentError; waitReady() resolves when it is back', async () => {
    const server = await startRconServer({ password: PASSWORD, players: ['Steve'] });
    // A connect timeout far beyond the bound below: waiting for one cannot pass for failing fast,
    // and a loaded machine has seconds of slack.
    const executor = makeExecutor(server, { connectTimeoutMs: 30_000 });
    try {
      await executor.connect();
      await server.down();
      await waitFor(() => !executor.isReady(), { what: 'executor to notice the drop' });
      const started = performance.now();
      await assert.rejects(executor.execute('give Steve apple', context), (error: unknown) => {
        assert.ok(error instanceof NotSentError, String(error));
        assert.match(error.message, /not connected.*not sent/);
        return true;
      });
      assert.ok(performance.now() - started < 5_000, 'no waiting for a connect timeout (30 s)');
      assert.equal(executor.stats().connected, false);

      const ready = executor.waitReady(AbortSignal.timeout(5000));
      await server.up();
      await ready;
      assert.equal(await executor.execute('give Steve apple', context), 'Gave 1 [Apple] to Steve');
      assert.deepEqual(deliveries(server), ['give Steve apple']);
    } finally {
      await executor.close();
      await server.close();
    }
  });

  test('connect() fails while the server is down; waitReady() keeps retrying until it is up', async () => {
    const server = await startRconServer({ password: PASSWORD });
    await server.down();
    const executor = makeExecutor(server);
    try {
      await assert.rejects(executor.connect(), RconConnectError);
      const ready = executor.waitReady(AbortSignal.timeout(5000));
      await server.up();
      await ready;
      assert.equal(executor.isReady(), true);
    } finally {
      await executor.close();
      await server.close();
    }
  });

  test('waitReady() rejects with the signal reason when aborted', async () => {
    const server = await startRconServer({ password: PASSWORD });
    await server.down();
    const executor = makeExecutor(server);
    try {
      const controller = new AbortController();
      const ready = executor.waitReady(controller.signal);
      controller.abort(new Error('drain bound reached'));
      await assert.rejects(ready, /drain bound reached/);
    } finally {
      await executor.close();
      await server.close();
    }
  });

  test('a wrong password on connect() is a CredentialsError (exit 78) without the password', async () => {
    const server = await startRconServer({ password: 'the-real-one' });
    const executor = makeExecutor(server);
    try {
      await assert.rejects(executor.connect(), (error: unknown) => {
        assert.ok(error instanceof CredentialsError);
        assert.equal(error.exitCode, 78);
        assert.ok(!error.message.includes(PASSWORD) && !error.message.includes('the-real-one'));
        return true;
      });
      await assert.rejects(executor.waitReady(), CredentialsError);
      await assert.rejects(executor.execute('list', context), CredentialsError);
      assert.equal(server.authFailures, 1, 'no retrying a rejected password');
    } finally {
      await executor.close();
      await server.close();
    }
  });

  test('a password changed under porter: the reconnect fails with CredentialsError and stops retrying', async () => {
    const server = await startRconServer({ password: PASSWORD, players: ['Steve'] });
    const executor = makeExecutor(server);
    try {
      await executor.connect();
      server.setPassword('rotated');
      await server.restart();
      await waitFor(() => !executor.isReady(), { what: 'executor to notice the restart' });
      await assert.rejects(executor.waitReady(AbortSignal.timeout(5000)), CredentialsError);
      await assert.rejects(executor.execute('give Steve apple', context), CredentialsError);
      assert.equal(server.authFailures, 1);
      assert.deepEqual(deliveries(server), []);
    } finally {
      await executor.close();
      await server.close();
    }
  });
});

describe('RconExecutor on other flavours', () => {
  test('id0 (Palworld-style) server works', async () => {
    const server = await startRconServer({ password: PASSWORD, flavour: 'id0', players: ['Lamball'] });
    const executor = makeExecutor(server);
    try {
      await executor.connect();
      assert.match(await executor.query('ShowPlayers'), /^name,playeruid,steamid\nLamball,/);
      const answers = await Promise.all([1, 2, 3].map((n) => executor.execute(`Broadcast ${n}`, context)));
      assert.deepEqual(answers, ['Broadcasted: 1\n', 'Broadcasted: 2\n', 'Broadcasted: 3\n']);
      assert.equal(server.maxInFlight, 1);
    } finally {
      await executor.close();
      await server.close();
    }
  });

  test('source server: concurrent commands stay paired with their answers', async () => {
    const server = await startRconServer({ password: PASSWORD, flavour: 'source' });
    const executor = makeExecutor(server);
    try {
      await executor.connect();
      const answers = await Promise.all(
        Array.from({ length: 6 }, (_, i) => executor.execute(i % 2 ? `echo n${i}` : `porter-sim delay 10 d${i}`, context)),
      );
      assert.deepEqual(answers, ['d0', 'n1\n', 'd2', 'n3\n', 'd4', 'n5\n']);
      assert.equal(server.maxInFlight, 1);
    } finally {
      await executor.close();
      await server.close();
    }
  });
});

describe('close()', () => {
  let server: FakeRconServer;
  before(async () => {
    server = await startRconServer({ password: PASSWORD, players: ['Steve'] });
  });
  after(() => server.close());

  test('settles queued commands and is idempotent', async () => {
    const executor = makeExecutor(server);
    await executor.connect();
    // Never answered: a close delayed by a slow machine cannot come after the answer.
    server.failNext('hang');
    const inFlight = executor.execute('give Steve diamond', context);
    const queued = executor.execute('give Steve apple', context);
    await waitFor(() => server.executed.some((e) => e.command === 'give Steve diamond'), { what: 'the unanswered command on the wire' });
    await executor.close();
    await executor.close();
    await assert.rejects(inFlight, OutcomeUnknownError);
    await assert.rejects(queued, NotSentError);
    await assert.rejects(executor.execute('list', context), NotSentError);
  });
});
