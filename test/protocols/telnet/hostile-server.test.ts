import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { pino } from 'pino';
import { NotSentError, OutcomeUnknownError } from '../../../src/errors.js';
import { TelnetConnectError } from '../../../src/protocols/telnet/errors.js';
import { TelnetExecutor } from '../../../src/protocols/telnet/executor.js';

/**
 * Servers that are not the well-behaved simulator: real telnet negotiation, LF-only line ends,
 * NULs, a console that answers the command but never the end marker, and a port that speaks
 * something else. Each is a raw TCP server written here, line by line.
 */

const silent = pino({ level: 'silent' });
const context = { id: '1', serverId: '1b4e28ba-2fa1-11d2-883f-0016d3cca427' };
const servers: Server[] = [];

/** A raw server; `onLine` gets each line the client sends (LF-terminated, CR removed). */
async function rawServer(onConnect: (socket: Socket) => void, onLine: (socket: Socket, line: string) => void): Promise<number> {
  const server = createServer((socket) => {
    socket.on('error', () => socket.destroy());
    let buffer = '';
    socket.on('data', (chunk: Buffer) => {
      buffer += chunk.toString('utf8');
      for (let end = buffer.indexOf('\n'); end !== -1; end = buffer.indexOf('\n')) {
        onLine(socket, buffer.slice(0, end).replace(/\r$/, ''));
        buffer = buffer.slice(end + 1);
      }
    });
    onConnect(socket);
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

/** Generous deadlines by default: on a loaded machine a login or an answer can take seconds. */
function executor(port: number, timeoutMs = 10_000, connectTimeoutMs = 10_000): TelnetExecutor {
  return new TelnetExecutor(
    { type: 'telnet', host: '127.0.0.1', port, password: 'pw-1234', timeoutMs, connectTimeoutMs },
    { logger: silent, backoff: { initialMs: 20, maxMs: 100 } },
  );
}

const markerReply = (line: string) => `*** ERROR: unknown command '${line}'`;

describe('telnet executor against hostile or odd servers', () => {
  after(() => Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve)))));

  test('telnet negotiation, NULs and LF-only line ends do not disturb login or answers', async () => {
    const port = await rawServer(
      (socket) => socket.write(Buffer.concat([Buffer.from([255, 253, 1, 255, 251, 3, 0, 0]), Buffer.from('Please enter password:\n')])),
      (socket, line) => {
        if (line === 'pw-1234') socket.write(Buffer.concat([Buffer.from('Logon successful.\n'), Buffer.from([255, 250, 24, 1, 255, 240])]));
        else if (line.startsWith('porter-end-')) socket.write(`${markerReply(line)}\n`);
        else socket.write(`2024-01-01T00:00:00 1.000 INF Executing command '${line}' by Telnet from x\nDropped item\n`);
      },
    );
    const telnet = executor(port);
    try {
      await telnet.connect();
      assert.equal(await telnet.execute('give Alice casinoCoin 1', context), 'Dropped item');
    } finally {
      await telnet.close();
    }
  });

  test('an answer whose end marker never comes is unknown, with how much of it arrived', async () => {
    // Only the login's marker is answered.
    let markersAnswered = 0;
    const port = await rawServer(
      (socket) => socket.write('*** Connected with 7DTD server.\r\n'),
      (socket, line) => {
        if (line.startsWith('porter-end-') && markersAnswered === 0) {
          markersAnswered += 1;
          socket.write(`${markerReply(line)}\r\n`);
        } else if (!line.startsWith('porter-end-')) {
          socket.write('Dropped item\r\n');
        }
      },
    );
    // Long enough for the one line to arrive on a slow machine before the marker is given up on.
    const telnet = executor(port, 5_000);
    try {
      await telnet.connect();
      await assert.rejects(telnet.execute('give Alice casinoCoin 1', context), (error: Error) => {
        assert.ok(error instanceof OutcomeUnknownError);
        assert.match(error.message, /after 1 line of its answer/);
        assert.match(error.message, /not sent again/);
        return true;
      });
      // The connection that timed out is gone: the next command waits for a new one.
      await assert.rejects(telnet.execute('give Alice casinoCoin 1', context), NotSentError);
    } finally {
      await telnet.close();
    }
  });

  test('a port that never says anything a console says fails the login, to be retried (not exit 78)', async () => {
    const port = await rawServer(
      (socket) => socket.write('SSH-2.0-OpenSSH_9.2\r\n'),
      () => {},
    );
    // The login can only end by its deadline here: a short one keeps the test quick.
    const telnet = executor(port, 10_000, 1000);
    try {
      await assert.rejects(telnet.connect(), TelnetConnectError);
    } finally {
      await telnet.close();
    }
  });

  test('a server that closes during login fails the login with a hint about TelnetPort', async () => {
    const port = await rawServer(
      (socket) => socket.end('Please enter password:\r\n'),
      () => {},
    );
    const telnet = executor(port);
    try {
      await assert.rejects(telnet.connect(), (error: Error) => error instanceof TelnetConnectError && /TelnetPort/.test(error.message));
    } finally {
      await telnet.close();
    }
  });
});
