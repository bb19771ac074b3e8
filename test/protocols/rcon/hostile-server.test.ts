import { OutcomeUnknownError } from '../../../src/errors.js';
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { AnswerTooLargeError, MAX_ANSWER_BYTES } from '../../../src/protocols/answer-limit.js';
import { RconExecutor } from '../../../src/protocols/rcon/executor.js';
import { RconConnection } from '../../../src/protocols/rcon/connection.js';
import { simEchoText } from '../../../src/sim/rcon-answers.js';
import { startRconServer, type FakeRconServer } from '../../../src/sim/faults/rcon-server.js';
import { waitFor } from '../../helpers/wait-for.js';
import { context, executorConfig, PASSWORD, silent } from './helpers/setup.js';

/** A server that floods one answer, and one that answers with id 0. */

interface Captured {
  readonly logger: pino.Logger;
  readonly lines: Array<Record<string, unknown>>;
}

function capturedLogger(): Captured {
  const lines: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      for (const line of chunk.toString('utf8').split('\n')) if (line) lines.push(JSON.parse(line) as Record<string, unknown>);
      callback();
    },
  });
  return { logger: pino({ level: 'debug' }, sink), lines };
}

const deliveries = (server: FakeRconServer) => server.executed.filter((entry) => !entry.query).map((entry) => entry.command);

async function withServer(flavour: 'minecraft' | 'source' | 'id0', run: (server: FakeRconServer) => Promise<void>): Promise<void> {
  const server = await startRconServer({ password: PASSWORD, flavour, players: ['Steve'] });
  try {
    await run(server);
  } finally {
    await server.close();
  }
}

describe('an answer that floods without end', () => {
  for (const flavour of ['minecraft', 'source'] as const) {
    test(`${flavour}: fails as AnswerTooLargeError (outcome unknown) and the connection is dropped at once`, () =>
      withServer(flavour, async (server) => {
        const cap = 64 * 1024;
        const connection = new RconConnection({
          host: '127.0.0.1',
          port: server.port,
          password: PASSWORD,
          flavour,
          connectTimeoutMs: 2000,
          maxAnswerBytes: cap,
          logger: silent,
        });
        await connection.open();
        server.failNext('flood');
        await assert.rejects(connection.request('give Steve diamond', 10_000), (error: unknown) => {
          assert.ok(error instanceof AnswerTooLargeError, String(error));
          assert.ok(error instanceof OutcomeUnknownError, 'the delivery loop fails it as unknown and never resends it');
          assert.equal(error.code, 'E_ANSWER_TOO_LARGE');
          assert.match(error.message, /over porter's cap of 64 KiB/);
          assert.match(error.message, /reset the connection/);
          assert.match(error.message, /not sent again/);
          return true;
        });
        assert.equal(connection.state, 'closed');
        assert.deepEqual(deliveries(server), ['give Steve diamond']);
        await waitFor(() => server.connections === 0, { what: 'the flooding connection to close' });
      }));
  }

  test('the executor with the real cap: fails the flooded command, then delivers the next one on a new connection', () =>
    withServer('minecraft', async (server) => {
      // A timeout far beyond the bound below: a flood slowed by a loaded machine still meets the cap first.
      const executor = new RconExecutor(executorConfig(server, { timeoutMs: 120_000 }), {
        logger: silent,
        backoff: { initialMs: 20, maxMs: 200 },
      });
      try {
        await executor.connect();
        server.failNext('flood');
        const started = Date.now();
        await assert.rejects(executor.execute('give Steve diamond', context), AnswerTooLargeError);
        assert.ok(Date.now() - started < 60_000, 'failed by the cap, not by the 120 s timeout');
        assert.ok(server.floodedBytes >= MAX_ANSWER_BYTES, `the fake sent ${server.floodedBytes} bytes`);
        await executor.waitReady(AbortSignal.timeout(10_000));
        assert.equal(await executor.execute('give Steve emerald', context), 'Gave 1 [Emerald] to Steve');
        assert.deepEqual(deliveries(server), ['give Steve diamond', 'give Steve emerald']);
        assert.equal(server.totalConnections, 2);
      } finally {
        await executor.close();
      }
    }));

  test('id0: the first packet is the answer; the flood after it resets the connection instead of answering the next command', () =>
    withServer('id0', async (server) => {
      const executor = new RconExecutor(executorConfig(server), { logger: silent, backoff: { initialMs: 20, maxMs: 200 } });
      try {
        await executor.connect();
        server.failNext('flood');
        assert.equal(await executor.execute('Broadcast flood', context), 'x'.repeat(4096));
        await waitFor(() => !executor.isReady(), { what: 'the connection to be reset' });
        await executor.waitReady(AbortSignal.timeout(10_000));
        assert.equal(await executor.execute('Broadcast next', context), 'Broadcasted: next\n');
        assert.equal(server.totalConnections, 2);
      } finally {
        await executor.close();
      }
    }));
});

describe('a server that answers with id 0 under the minecraft or source flavour', () => {
  for (const flavour of ['minecraft', 'source'] as const) {
    test(`${flavour}: every command is delivered without a timeout, and the switch is logged once per executor`, () =>
      withServer('id0', async (server) => {
        const { logger, lines } = capturedLogger();
        // A missed id-0 answer would wait this out; a slow machine's answers come well within it.
        const timeoutMs = 60_000;
        const executor = new RconExecutor(executorConfig({ port: server.port, flavour }, { timeoutMs }), {
          logger,
          backoff: { initialMs: 20, maxMs: 200 },
        });
        try {
          await executor.connect();
          const started = Date.now();
          assert.equal(await executor.execute('Broadcast one', context), 'Broadcasted: one\n');
          assert.equal(await executor.execute('porter-sim echo 3000', context), simEchoText(3000));
          assert.match(await executor.query('ShowPlayers'), /^name,playeruid,steamid\nSteve,/);
          assert.ok(Date.now() - started < timeoutMs, 'no command waited for its timeout');

          // A new connection learns it again, quietly.
          await server.restart();
          await waitFor(() => !executor.isReady(), { what: 'the drop to be noticed' });
          await executor.waitReady(AbortSignal.timeout(10_000));
          assert.equal(await executor.execute('Broadcast two', context), 'Broadcasted: two\n');
          assert.equal(server.totalConnections, 2);

          const switches = lines.filter((line) => line.event === 'rcon.id0');
          assert.deepEqual(
            switches.map((line) => line.level),
            [40, 20],
            'one warning, then debug for the second connection',
          );
          assert.equal(switches[0]!.flavour, flavour);
          // The warning tells the operator which setting says so: the configured flavour and the one to set.
          assert.match(String(switches[0]!.msg), new RegExp(`flavour is "${flavour}"`));
          assert.match(String(switches[0]!.msg), /"flavour": "id0"/);
        } finally {
          await executor.close();
        }
      }));
  }

  test('a well-behaved minecraft server never switches', () =>
    withServer('minecraft', async (server) => {
      const { logger, lines } = capturedLogger();
      const executor = new RconExecutor(executorConfig(server), { logger });
      try {
        await executor.connect();
        assert.equal(await executor.execute('porter-sim echo 10000', context), simEchoText(10_000));
        assert.equal(await executor.execute('give Steve diamond', context), 'Gave 1 [Diamond] to Steve');
        assert.deepEqual(
          lines.filter((line) => line.event === 'rcon.id0'),
          [],
        );
      } finally {
        await executor.close();
      }
    }));
});
