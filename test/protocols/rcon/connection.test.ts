import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import type { Clock } from '../../../src/clock.js';
import { CredentialsError, NotSentError, OutcomeUnknownError } from '../../../src/errors.js';
import { RconConnection, type RconConnectionOptions } from '../../../src/protocols/rcon/connection.js';
import { RconConnectError } from '../../../src/protocols/rcon/errors.js';
import type { RconFlavour } from '../../../src/protocols/rcon/exchange.js';
import { simEchoText, simWideText } from '../../../src/sim/rcon-answers.js';
import { startRconServer, type FakeRconServer } from '../../../src/sim/faults/rcon-server.js';
import { FakeClock, flush } from '../../helpers/fake-clock.js';
import { waitFor } from '../../helpers/wait-for.js';
import { PASSWORD, silent } from './helpers/setup.js';

function options(port: number, flavour: RconFlavour, overrides: Partial<RconConnectionOptions> = {}): RconConnectionOptions {
  return { host: '127.0.0.1', port, password: PASSWORD, flavour, connectTimeoutMs: 10_000, logger: silent, ...overrides };
}

async function opened(server: FakeRconServer, overrides: Partial<RconConnectionOptions> = {}): Promise<RconConnection> {
  const connection = new RconConnection(options(server.port, server.flavour, overrides));
  await connection.open();
  return connection;
}

for (const flavour of ['minecraft', 'source', 'id0'] as const) {
  describe(`RconConnection against the fake ${flavour} server`, () => {
    let server: FakeRconServer;
    before(async () => {
      server = await startRconServer({ password: PASSWORD, flavour, players: ['Alice', 'Bob'] });
    });
    after(() => server.close());

    test('logs in with the right password', async () => {
      const connection = await opened(server);
      assert.equal(connection.state, 'ready');
      connection.destroy();
    });

    test('a wrong password is a CredentialsError that names host:port and the settings, never a password', async () => {
      const wrong = 'Wr0ng-Passw0rd';
      const connection = new RconConnection(options(server.port, flavour, { password: wrong }));
      const error = await connection.open().then(
        () => assert.fail('login with a wrong password succeeded'),
        (e: unknown) => e,
      );
      assert.ok(error instanceof CredentialsError, `got ${String(error)}`);
      assert.equal(error.exitCode, 78);
      assert.match(error.message, new RegExp(`rejected by 127\\.0\\.0\\.1:${server.port}`));
      assert.match(error.message, /passwordFile/);
      assert.match(error.message, /PORTER_RCON_PASSWORD/);
      assert.ok(!error.message.includes(wrong) && !error.message.includes(PASSWORD));
      assert.equal(connection.state, 'closed');
    });

    test('returns an empty answer as an empty string', async () => {
      server.setHandler((command) => (command === 'quiet' ? '' : undefined));
      const connection = await opened(server);
      try {
        assert.equal(await connection.request('quiet', 10_000), '');
        assert.equal(await connection.request('quiet', 10_000), '', 'and the connection stays in step');
      } finally {
        server.setHandler(undefined);
        connection.destroy();
      }
    });

    test('a hung command times out as OutcomeUnknownError and the connection is never reused', async () => {
      // The deadline on a fake clock, moved only once the fake has run the command: a slow machine
      // cannot time the command out before it reached the server.
      const clock = new FakeClock();
      const connection = await opened(server, { clock });
      const before = server.executed.length;
      server.failNext('hang');
      const pending = connection.request('give Alice diamond', 150);
      pending.catch(() => undefined);
      await waitFor(() => server.executed.length === before + 1, { what: 'the fake to run the command it will not answer' });
      clock.advance(150);
      await assert.rejects(pending, (error: unknown) => {
        assert.ok(error instanceof OutcomeUnknownError, String(error));
        assert.match(error.message, /timed out after 150 ms/);
        assert.match(error.message, /not sent again/);
        return true;
      });
      assert.equal(server.executed.length, before + 1, 'the fake ran it: exactly the case that must not be resent');
      assert.equal(connection.state, 'closed');
      await assert.rejects(connection.request('list', 1000), NotSentError);
    });

    test('a connection dropped before the answer gives OutcomeUnknownError', async () => {
      const connection = await opened(server);
      server.failNext('close-before-answer');
      await assert.rejects(connection.request('give Alice diamond', 10_000), OutcomeUnknownError);
    });

    test('a connection dropped before the command ran still gives OutcomeUnknownError (it was written)', async () => {
      const connection = await opened(server);
      const before = server.executed.length;
      server.failNext('close-without-running');
      await assert.rejects(connection.request('give Alice diamond', 10_000), OutcomeUnknownError);
      assert.equal(server.executed.length, before);
    });

    test('a connection closed right after the answer still returns the answer', async () => {
      const connection = await opened(server);
      server.setHandler((command) => (command === 'ping' ? 'pong' : undefined));
      server.failNext('close-after-answer');
      try {
        assert.equal(await connection.request('ping', 10_000), 'pong');
      } finally {
        server.setHandler(undefined);
        connection.destroy();
      }
    });

    test('nothing is written on a closed connection: NotSentError', async () => {
      const connection = await opened(server);
      connection.destroy();
      const before = server.executed.length;
      await assert.rejects(connection.request('give Alice diamond', 1000), (error: unknown) => {
        assert.ok(error instanceof NotSentError);
        assert.match(error.message, /not sent/);
        return true;
      });
      assert.equal(server.executed.length, before);
    });

    test('aborting a command in flight gives OutcomeUnknownError and closes the connection', async () => {
      const connection = await opened(server);
      const controller = new AbortController();
      const pending = connection.request('porter-sim delay 2000 late', 5000, controller.signal);
      controller.abort(new Error('shutting down'));
      await assert.rejects(pending, OutcomeUnknownError);
      assert.equal(connection.state, 'closed');
    });

    test("a signal that aborts after its own command was answered cancels nothing of the next one's", async () => {
      const connection = await opened(server);
      const earlier = new AbortController();
      await connection.request('list', 5000, earlier.signal);
      const unsignalled = connection.request('porter-sim delay 100 first', 5000);
      earlier.abort(new Error('the earlier caller left'));
      assert.match(await unsignalled, /first/);
      const other = new AbortController();
      const signalled = connection.request('porter-sim delay 100 second', 5000, other.signal);
      earlier.signal.dispatchEvent(new Event('abort'));
      assert.match(await signalled, /second/);
      assert.equal(connection.state, 'ready');
      connection.destroy();
    });

    test('commands sharing one long-lived signal leave one listener on it, and none once the connection ends', async () => {
      const connection = await opened(server);
      const watcher = new AbortController();
      for (let i = 0; i < 5; i++) await connection.request('list', 5000, watcher.signal);
      assert.equal(getEventListeners(watcher.signal, 'abort').length, 1);
      connection.destroy();
      assert.equal(getEventListeners(watcher.signal, 'abort').length, 0);
    });
  });
}

for (const flavour of ['minecraft', 'source'] as const) {
  describe(`multi-packet answers, ${flavour} flavour`, () => {
    let server: FakeRconServer;
    before(async () => {
      server = await startRconServer({ password: PASSWORD, flavour });
    });
    after(() => server.close());

    test('an answer of 10,000 characters comes back whole, and the connection stays in step', async () => {
      const connection = await opened(server);
      try {
        const answer = await connection.request('porter-sim echo 10000', 10_000);
        assert.equal(answer.length, 10_000);
        assert.equal(answer, simEchoText(10_000));
        assert.equal(await connection.request('porter-sim echo 5', 10_000), simEchoText(5));
        // Exactly one fragment's worth: the boundary where an end marker would be guessed wrong.
        assert.equal(await connection.request('porter-sim echo 4096', 10_000), simEchoText(4096));
        assert.equal(await connection.request('porter-sim echo 8192', 10_000), simEchoText(8192));
      } finally {
        connection.destroy();
      }
      assert.equal(server.framingViolations, 0);
    });

    test('non-ASCII answers longer than a fragment come back whole', async () => {
      const connection = await opened(server);
      try {
        assert.equal(await connection.request('porter-sim unicode 9000', 10_000), simWideText(9000));
      } finally {
        connection.destroy();
      }
    });
  });
}

test('id0 flavour: one request in flight, the next packet is the answer', async () => {
  const server = await startRconServer({ password: PASSWORD, flavour: 'id0', players: ['Alice, the Great', 'Bob'] });
  try {
    const connection = await opened(server);
    const answer = await connection.request('ShowPlayers', 10_000);
    assert.match(answer, /^name,playeruid,steamid\nAlice, the Great,\d+,7656\d+\nBob,/);
    assert.equal(await connection.request('Broadcast hello', 10_000), 'Broadcasted: hello\n');
    assert.equal(await connection.request('porter-sim echo 3000', 10_000), simEchoText(3000));
    connection.destroy();
  } finally {
    await server.close();
  }
});

describe('connect and login deadlines', () => {
  let silentServer: Server;
  let garbageServer: Server;
  const held: Socket[] = [];
  before(async () => {
    silentServer = createServer((socket) => held.push(socket));
    garbageServer = createServer((socket) => {
      held.push(socket);
      socket.end('HTTP/1.1 400 Bad Request\r\n\r\n');
    });
    await Promise.all([silentServer, garbageServer].map((s) => new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve))));
  });
  after(async () => {
    for (const socket of held) socket.destroy();
    await Promise.all([silentServer, garbageServer].map((s) => new Promise((resolve) => s.close(resolve))));
  });

  test('a server that accepts but never answers the login fails within the auth deadline', async () => {
    const port = (silentServer.address() as AddressInfo).port;
    // The deadlines on a fake clock: the login times out when the test moves the clock past 100 ms.
    const clock = new FakeClock();
    const connection = new RconConnection(options(port, 'minecraft', { authTimeoutMs: 100, clock }));
    let settled = false;
    const opening = connection.open().finally(() => (settled = true));
    opening.catch(() => undefined);
    await waitFor(() => clock.nextWakeAt === clock.now() + 100, { what: 'the login to wait for its answer' });
    clock.advance(99);
    await flush();
    assert.equal(settled, false, 'gave up on the login before its deadline');
    clock.advance(1);
    await assert.rejects(opening, (error: unknown) => {
      assert.ok(error instanceof RconConnectError, String(error));
      assert.match(error.message, /timed out after 100 ms waiting for RCON .* to answer the login/);
      return true;
    });
  });

  test('a peer that is not an RCON server is a connect error naming the port problem', async () => {
    const port = (garbageServer.address() as AddressInfo).port;
    await assert.rejects(new RconConnection(options(port, 'source')).open(), (error: unknown) => {
      assert.ok(error instanceof RconConnectError, String(error));
      assert.match(error.message, /does not speak Source RCON|ended the connection during login/);
      return true;
    });
  });

  test('a refused connection is a connect error that says what to check', async () => {
    const server = await startRconServer({ password: PASSWORD });
    const port = server.port;
    await server.close();
    await assert.rejects(new RconConnection(options(port, 'minecraft')).open(), (error: unknown) => {
      assert.ok(error instanceof RconConnectError, String(error));
      assert.match(error.message, /ECONNREFUSED/);
      assert.match(error.message, /enable-rcon=true/);
      return true;
    });
  });

  test('connect is bounded by connectTimeoutMs, measured on the injected clock', async () => {
    // A clock whose deadlines expire at once: the deadline fires before any connect can complete,
    // without depending on how this machine's network treats an unroutable address.
    const expired: Clock = { now: () => Date.now(), sleep: () => Promise.resolve() };
    const server = await startRconServer({ password: PASSWORD });
    try {
      const connection = new RconConnection(options(server.port, 'minecraft', { connectTimeoutMs: 150, clock: expired }));
      await assert.rejects(connection.open(), (error: unknown) => {
        assert.ok(error instanceof RconConnectError, String(error));
        assert.match(error.message, new RegExp(`timed out after 150 ms connecting to RCON at 127\\.0\\.0\\.1:${server.port}`));
        return true;
      });
      assert.equal(connection.state, 'closed');
    } finally {
      await server.close();
    }
  });
});
