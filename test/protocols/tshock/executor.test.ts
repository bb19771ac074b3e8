import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { pino, type Logger } from 'pino';
import { CommandRefusedError, CredentialsError, exitCodeOf, NotSentError, OutcomeUnknownError } from '../../../src/errors.js';
import { TSHOCK_PLAYER_LIST_ROUTE } from '../../../src/games/terraria.js';
import { TShockConnectError, TShockExecutor, type TShockExecutorConfig } from '../../../src/protocols/tshock/executor.js';
import { startTShockServer, type FakeTShockServer, type TShockFault } from '../../../src/sim/faults/tshock-server.js';
import { FakeClock } from '../../helpers/fake-clock.js';
import { stepClockUntil } from '../../helpers/step-clock.js';
import { waitFor } from '../../helpers/wait-for.js';

/** Distinctive, and with characters a URL must encode: a leak shows in any spelling. */
const TOKEN = 'rest-T0ken/with %41+&=?#-d9e1';
const context = { id: '42', serverId: '1b4e28ba-2fa1-11d2-883f-0016d3cca427' };

function config(port: number, overrides: Partial<TShockExecutorConfig> = {}): TShockExecutorConfig {
  return { type: 'tshock', host: '127.0.0.1', port, password: TOKEN, timeoutMs: 30_000, connectTimeoutMs: 15_000, ...overrides };
}

/** A logger whose lines the test can read. */
function captured(): { logger: Logger; text: () => string } {
  let text = '';
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      text += chunk.toString();
      done();
    },
  });
  return { logger: pino({ level: 'trace' }, stream), text: () => text };
}

async function withServer(
  body: (server: FakeTShockServer, tshock: TShockExecutor, logs: () => string) => Promise<void>,
  overrides: Partial<TShockExecutorConfig> = {},
  clock?: FakeClock,
): Promise<void> {
  const server = await startTShockServer({ token: TOKEN, players: ['Bob the Builder', { nickname: 'Ann, 1st', username: 'ann' }] });
  const { logger, text } = captured();
  const tshock = new TShockExecutor(config(server.port, overrides), {
    logger,
    backoff: { initialMs: 20, maxMs: 100 },
    ...(clock ? { clock } : {}),
  });
  try {
    await body(server, tshock, text);
  } finally {
    await tshock.close();
    await server.close();
  }
}

function rejection(promise: Promise<unknown>): Promise<Error> {
  return promise.then(
    () => assert.fail('expected a rejection'),
    (error: unknown) => error as Error,
  );
}

/** The events (docs/operations.md#log-events) of the JSON lines in a captured log. */
function eventsIn(text: string): unknown[] {
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => (JSON.parse(line) as { event?: unknown }).event);
}

function assertNoToken(text: string): void {
  for (const spelling of [TOKEN, encodeURIComponent(TOKEN), encodeURIComponent(encodeURIComponent(TOKEN))]) {
    assert.ok(!text.includes(spelling), `the token leaked:\n${text}`);
  }
}

const ran = (server: FakeTShockServer) => server.executed.filter((e) => !e.query).map((e) => e.command);

describe('TShockExecutor against the simulated TShock REST API', () => {
  test('connect proves the token with /tokentest; a command runs once and its lines are the answer', async () => {
    await withServer(async (server, tshock) => {
      await tshock.connect();
      assert.equal(tshock.isReady(), true);
      assert.equal(tshock.connectedText, `TShock REST token accepted by http://127.0.0.1:${server.port}`);
      assert.equal(await tshock.execute('/give "Terra Blade" "Bob" 1', context), 'Gave Bob the Builder 1 Terra Blade.');
      assert.equal(await tshock.execute('/say Thanks, Bob!', context), '', 'a broadcast prints nothing to the REST user');
      assert.deepEqual(ran(server), ['/give "Terra Blade" "Bob" 1', '/say Thanks, Bob!']);
    });
  });

  test('a command without the slash gets one, a leading "." is not taken as the silent specifier', async () => {
    await withServer(async (server, tshock) => {
      await tshock.connect();
      assert.equal(await tshock.execute('give Zenith Bob', context), 'Gave Bob the Builder 1 Zenith.');
      assert.equal(await tshock.execute('.off', context), 'Invalid command entered. Type /help for a list of valid commands.');
      assert.deepEqual(ran(server), ['/give Zenith Bob', '/.off']);
    });
  });

  test('buyer text arrives exactly as written, although TShock decodes the command twice', async () => {
    await withServer(async (server, tshock) => {
      await tshock.connect();
      const command = '/say Łucja ★ paid 100%41 + tip & "quotes" #1 ?x=y %%';
      await tshock.execute(command, context);
      assert.deepEqual(ran(server), [command]);
    });
  });

  test("TShock's failure text is the answer (the delivery loop matches the game's failure patterns)", async () => {
    await withServer(async (_server, tshock) => {
      await tshock.connect();
      assert.equal(await tshock.execute('/give Zenith Ghost', context), 'Invalid player!');
      assert.equal(await tshock.execute('/item Zenith', context), 'You must use this command in-game.');
    });
  });

  test('the player list route answers with its JSON; other queries run as commands', async () => {
    await withServer(async (server, tshock) => {
      await tshock.connect();
      const list = JSON.parse(await tshock.query(TSHOCK_PLAYER_LIST_ROUTE)) as { players: { nickname: string; username: string }[] };
      assert.deepEqual(
        list.players.map((p) => [p.nickname, p.username]),
        [
          ['Bob the Builder', ''],
          ['Ann, 1st', 'ann'],
        ],
      );
      assert.equal(await tshock.query('who'), 'Online Players ([c/AAFFAA:2]/8)\nBob the Builder, Ann, 1st');
      assert.equal(server.playerListReads, 1);
      assert.deepEqual(ran(server), [], 'queries are no deliveries');
    });
  });

  test('CR, LF or NUL are refused before anything is sent', async () => {
    await withServer(async (server, tshock) => {
      await tshock.connect();
      const requests = server.requests;
      for (const command of ['/say hi\n/off', '/say a\rb', '/say \0']) {
        assert.ok((await rejection(tshock.execute(command, context))) instanceof CommandRefusedError, JSON.stringify(command));
      }
      assert.equal(server.requests, requests);
    });
  });

  test('a wrong token is CredentialsError (exit 78) on connect, without the token in the message or the log', async () => {
    const server = await startTShockServer({ token: 'the-real-one-1234' });
    const { logger, text } = captured();
    const tshock = new TShockExecutor(config(server.port), { logger });
    try {
      const error = await rejection(tshock.connect());
      assert.ok(error instanceof CredentialsError, String(error));
      assert.equal(exitCodeOf(error), 78);
      assert.match(error.message, /rejected the token \(status 403: Not authorized\. .*provided token was not valid\.\)/);
      assert.match(error.message, /ApplicationRestTokens/);
      assertNoToken(error.message);
      assertNoToken(text());
      assert.ok((await rejection(tshock.waitReady())) instanceof CredentialsError, 'the link stops for good');
    } finally {
      await tshock.close();
      await server.close();
    }
  });

  test('a token revoked at run time: the command is refused unrun with CredentialsError', async () => {
    await withServer(async (server, tshock, logs) => {
      await tshock.connect();
      server.setToken('rotated-token-5678');
      const error = await rejection(tshock.execute('/give Zenith Bob', context));
      assert.ok(error instanceof CredentialsError, String(error));
      assertNoToken(error.message);
      assert.deepEqual(ran(server), []);
      await waitFor(() => eventsIn(logs()).includes('connection.refused'), { what: 'the link to give up on the token' });
      assertNoToken(logs());
    });
  });

  test('a group without tshock.rest.command: CredentialsError naming the permission, nothing run', async () => {
    await withServer(async (server, tshock) => {
      await tshock.connect();
      server.setRawCommandPermission(false);
      const error = await rejection(tshock.execute('/give Zenith Bob', context));
      assert.ok(error instanceof CredentialsError);
      assert.match(error.message, /has no access to use the specified API endpoint/);
      assert.match(error.message, /tshock\.rest\.command/);
      assert.deepEqual(ran(server), []);
    });
  });

  test('a server that is down: connect fails with a hint, commands are not sent, and it is ready again once up', async () => {
    await withServer(async (server, tshock, logs) => {
      await tshock.connect();
      await server.down();
      const notSent = await rejection(tshock.execute('/give Zenith Bob', context));
      assert.ok(notSent instanceof NotSentError, String(notSent));
      assert.match(notSent.message, /ECONNREFUSED/);
      assert.equal(tshock.isReady(), false);
      assert.ok((await rejection(tshock.execute('/give Zenith Bob', context))) instanceof NotSentError);
      await server.up();
      await tshock.waitReady(AbortSignal.timeout(10_000));
      assert.equal(await tshock.execute('/give Zenith Bob', context), 'Gave Bob the Builder 1 Zenith.');
      assert.deepEqual(ran(server), ['/give Zenith Bob'], 'only the command sent after the return ran');
      assert.equal(tshock.stats().reconnects, 1);
      assert.ok(eventsIn(logs()).includes('connection.lost'), logs());
      assertNoToken(logs());
    });
  });

  test('connect to a port nobody listens on is TShockConnectError naming RestApiEnabled', async () => {
    const server = await startTShockServer({ token: TOKEN });
    const port = server.port;
    await server.close();
    const tshock = new TShockExecutor(config(port), { logger: pino({ level: 'silent' }) });
    try {
      const error = await rejection(tshock.connect());
      assert.ok(error instanceof TShockConnectError, String(error));
      assert.match(error.message, /"RestApiEnabled": true/);
    } finally {
      await tshock.close();
    }
  });

  const unknownFaults: [TShockFault, RegExp, boolean][] = [
    ['close-before-answer', /gave no answer/, true],
    ['close-mid-answer', /gave no answer/, true],
    ['close-without-running', /gave no answer/, false],
    ['exception', /failed while handling the command \(status 500: Internal server error\.: Object reference/, true],
    ['proxy-502', /HTTP 502 .* not TShock's JSON/, false],
    ['garbage', /HTTP 200 .* not TShock's JSON/, true],
  ];
  for (const [fault, message, runs] of unknownFaults) {
    test(`${fault}: outcome unknown, never sent again`, async () => {
      await withServer(async (server, tshock, logs) => {
        await tshock.connect();
        server.failNext(fault);
        const error = await rejection(tshock.execute('/give Zenith Bob', context));
        assert.ok(error instanceof OutcomeUnknownError, `${fault}: ${String(error)}`);
        assert.match(error.message, message);
        assertNoToken(error.message);
        assert.deepEqual(ran(server), runs ? ['/give Zenith Bob'] : [], 'the executor sent it once and did not retry');
        await tshock.waitReady(AbortSignal.timeout(10_000));
        assert.equal(await tshock.execute('/say next', context), '');
        assert.equal(ran(server).filter((c) => c === '/give Zenith Bob').length, runs ? 1 : 0);
        assertNoToken(logs());
      });
    });
  }

  test('hang: no answer within timeoutMs is unknown; the next command goes out once the server answers again', async () => {
    // Deadlines and backoff on a fake clock: the hung command times out once the server ran it,
    // and the next command's answer cannot be late on a slow machine.
    const clock = new FakeClock();
    await withServer(
      async (server, tshock) => {
        await tshock.connect();
        server.failNext('hang');
        const pending = rejection(tshock.execute('/give Zenith Bob', context));
        await waitFor(() => ran(server).includes('/give Zenith Bob'), { what: 'the server to run the command it will not answer' });
        clock.advance(300);
        const error = await pending;
        assert.ok(error instanceof OutcomeUnknownError, String(error));
        assert.match(error.message, /no answer within 300 ms \(servers\[\]\.executor\.timeoutMs\)/);
        await stepClockUntil(clock, () => tshock.isReady(), { maxStepMs: 100, what: 'the executor ready again' });
        assert.equal(await tshock.execute('/say next', context), '');
        assert.deepEqual(ran(server), ['/give Zenith Bob', '/say next']);
      },
      { timeoutMs: 300 },
      clock,
    );
  });

  test('a slow server within timeoutMs is just slow', async () => {
    await withServer(
      async (server, tshock) => {
        await tshock.connect();
        server.setDelay(150);
        assert.equal(await tshock.execute('/give Zenith Bob', context), 'Gave Bob the Builder 1 Zenith.');
      },
      { timeoutMs: 30_000 },
    );
  });

  test('one request at a time, even when the loop and the player list ask at once', async () => {
    await withServer(async (server, tshock) => {
      await tshock.connect();
      server.setDelay(30);
      await Promise.all([
        tshock.execute('/give Zenith Bob', context),
        tshock.query(TSHOCK_PLAYER_LIST_ROUTE),
        tshock.execute('/give Zenith Ann', context),
        tshock.query(TSHOCK_PLAYER_LIST_ROUTE),
      ]);
      assert.equal(server.maxConcurrent, 1);
    });
  });

  test('a command cancelled while waiting its turn is not sent', async () => {
    await withServer(async (server, tshock) => {
      await tshock.connect();
      server.setDelay(100);
      const first = tshock.execute('/give Zenith Bob', context);
      const controller = new AbortController();
      const second = tshock.execute('/give Zenith Ann', context, controller.signal);
      controller.abort();
      assert.ok((await rejection(second)) instanceof NotSentError);
      await first;
      assert.deepEqual(ran(server), ['/give Zenith Bob']);
    });
  });
});
