import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { CredentialsError, NotSentError, PorterError } from '../../src/errors.js';
import { openErrorOf, TcpConnection } from '../../src/protocols/tcp-connection.js';
import { FakeClock } from '../helpers/fake-clock.js';
import { freePort } from '../../bench/lib/free-port.js';
import { waitFor } from '../helpers/wait-for.js';

class LineConnectError extends PorterError {
  override readonly code = 'E_LINE_CONNECT';
}

interface LineHandlers {
  onLine(line: string): void;
  onEnd(reason: Error): void;
}

/**
 * The smallest protocol on TcpConnection: the server greets with "hello", a login answers
 * "welcome" to "login <password>", and each request is one line answered by one line.
 */
class LineConnection extends TcpConnection<LineHandlers> {
  readonly #timeoutMs: number;
  readonly early: string[] = [];
  #buffer = '';

  constructor(port: number, clock: FakeClock | undefined, timeoutMs = 10_000) {
    super(
      { host: '127.0.0.1', port, connectTimeoutMs: timeoutMs, ...(clock ? { clock } : {}) },
      { name: 'the line connection', server: 'the line server' },
    );
    this.#timeoutMs = timeoutMs;
  }

  open(signal?: AbortSignal): Promise<void> {
    return this.openWith(signal, {
      meanwhile: { onLine: (line) => this.early.push(line) },
      login: (socket) =>
        this.within<void>(this.#timeoutMs, signal, `waiting for the line server at ${this.address} to log in`, (resolve, reject) => {
          socket.write('login secret\n');
          return {
            onLine: (line) => (line === 'welcome' ? resolve(undefined) : reject(new CredentialsError('refused'))),
            onEnd: reject,
          };
        }),
      openError: (error) =>
        openErrorOf(error, LineConnectError, `the line server at ${this.address}`, (message) => `could not connect: ${message}`),
    });
  }

  async request(text: string, timeoutMs: number): Promise<string> {
    const socket = this.socketFor('request', undefined);
    let written = false;
    try {
      return await this.within<string>(timeoutMs, undefined, 'waiting for the answer', (resolve, reject) => {
        socket.write(`${text}\n`);
        written = true;
        return { onLine: resolve, onEnd: reject };
      });
    } catch (error) {
      this.failedRequest(error, written, () => false);
      throw new Error(`unknown: ${(error as Error).message}`, { cause: error });
    }
  }

  protected override onData(chunk: Buffer): void {
    this.#buffer += chunk.toString('utf8');
    for (let at = this.#buffer.indexOf('\n'); at >= 0; at = this.#buffer.indexOf('\n')) {
      const line = this.#buffer.slice(0, at);
      this.#buffer = this.#buffer.slice(at + 1);
      this.outstanding?.onLine(line);
    }
  }
}

/** A line server: answers "welcome" to a login, and what `answer` says to anything else (nothing when undefined). */
async function lineServer(
  answer: (line: string, socket: Socket) => string | undefined,
): Promise<{ server: Server; port: number; sockets: Set<Socket> }> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    let buffer = '';
    socket.on('data', (chunk: Buffer) => {
      buffer += chunk.toString('utf8');
      for (let at = buffer.indexOf('\n'); at >= 0; at = buffer.indexOf('\n')) {
        const line = buffer.slice(0, at);
        buffer = buffer.slice(at + 1);
        const reply = line.startsWith('login ') ? 'welcome' : answer(line, socket);
        if (reply !== undefined) socket.write(`${reply}\n`);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port, sockets };
}

describe('TcpConnection (the TCP side RCON and telnet share)', () => {
  let quiet: Awaited<ReturnType<typeof lineServer>>;
  before(async () => {
    quiet = await lineServer((line, socket) => (line === 'drop' ? void socket.destroy() : line === 'silence' ? undefined : `echo ${line}`));
  });
  after(() => {
    for (const socket of quiet.sockets) socket.destroy();
    quiet.server.close();
  });

  test('connects, logs in and answers requests one at a time; a second request in flight is not sent', async () => {
    const connection = new LineConnection(quiet.port, undefined);
    await connection.open();
    assert.equal(connection.state, 'ready');
    assert.equal(await connection.request('one', 10_000), 'echo one');
    const silent = connection.request('silence', 10_000);
    const busy = await connection.request('two', 10_000).then(
      () => assert.fail('a second request was sent'),
      (e: unknown) => e,
    );
    assert.ok(busy instanceof NotSentError);
    assert.match(busy.message, /already has a request in flight; the command was not sent/);
    connection.destroy();
    await assert.rejects(silent, /unknown: the connection was closed by porter/);
    assert.equal(connection.state, 'closed');
  });

  test('a request past its deadline on the injected clock ends the connection, and nothing is sent on it again', async () => {
    const clock = new FakeClock();
    const connection = new LineConnection(quiet.port, clock);
    await connection.open();
    const ended: Error[] = [];
    connection.onEnd((reason) => ended.push(reason));
    const answer = connection.request('silence', 5_000);
    await waitFor(() => clock.sleeping > 0, { what: 'the request deadline' });
    clock.advance(5_000);
    await assert.rejects(answer, /unknown: timed out after 5000 ms waiting for the answer/);
    assert.equal(connection.state, 'closed');
    assert.equal(ended.length, 1, 'the end listeners are told once');
    await assert.rejects(connection.request('again', 5_000), (e: unknown) => e instanceof NotSentError && /is not open/.test(e.message));
  });

  test('the login deadline on the injected clock fails open() with the protocol error', async () => {
    const mute = await lineServer(() => undefined);
    mute.server.removeAllListeners('connection');
    mute.server.on('connection', (socket: Socket) => {
      mute.sockets.add(socket);
      socket.on('error', () => undefined);
    });
    try {
      const clock = new FakeClock();
      const connection = new LineConnection(mute.port, clock, 3_000);
      const opening = connection.open().then(
        () => assert.fail('opened without a login answer'),
        (e: unknown) => e,
      );
      await waitFor(() => connection.state === 'authenticating' && clock.sleeping > 0, { what: 'the login step' });
      clock.advance(3_000);
      const error = await opening;
      assert.ok(error instanceof LineConnectError, String(error));
      assert.match(error.message, /could not connect: timed out after 3000 ms waiting for the line server at 127\.0\.0\.1:\d+ to log in/);
      assert.equal(connection.state, 'closed');
    } finally {
      for (const socket of mute.sockets) socket.destroy();
      mute.server.close();
    }
  });

  test('a socket error (connection refused) ends the connection with its code and fails open()', async () => {
    const connection = new LineConnection(await freePort(), undefined);
    const ended: Error[] = [];
    connection.onEnd((reason) => ended.push(reason));
    const error = await connection.open().then(
      () => assert.fail('connected to a port nothing listens on'),
      (e: unknown) => e,
    );
    assert.ok(error instanceof LineConnectError, String(error));
    assert.match(error.message, /^could not connect: ECONNREFUSED: /);
    assert.equal(connection.state, 'closed');
    assert.equal(ended.length, 1);
    assert.match(ended[0]!.message, /^ECONNREFUSED: /);
    await assert.rejects(connection.open(), /open\(\) may be called once/);
  });

  test('the server leaving mid-request is an unknown outcome, and a listener added after the end still hears it', async () => {
    const connection = new LineConnection(quiet.port, undefined);
    await connection.open();
    await assert.rejects(connection.request('drop', 10_000), /unknown: the (server closed the connection|connection closed|ECONNRESET)/);
    assert.equal(connection.state, 'closed');
    const late = await new Promise<Error>((resolve) => connection.onEnd(resolve));
    assert.match(late.message, /closed|ECONNRESET/);
  });

  test('a refused login stays a CredentialsError', async () => {
    const refusing = await lineServer(() => undefined);
    refusing.server.removeAllListeners('connection');
    refusing.server.on('connection', (socket: Socket) => {
      refusing.sockets.add(socket);
      socket.on('error', () => undefined);
      socket.on('data', () => socket.write('go away\n'));
    });
    try {
      const connection = new LineConnection(refusing.port, undefined);
      await assert.rejects(connection.open(), (e: unknown) => e instanceof CredentialsError && e.message === 'refused');
      assert.equal(connection.state, 'closed');
    } finally {
      for (const socket of refusing.sockets) socket.destroy();
      refusing.server.close();
    }
  });
});
