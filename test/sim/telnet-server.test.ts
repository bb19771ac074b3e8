import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { startTelnetServer, type FakeTelnetServer } from '../../src/sim/faults/telnet-server.js';
import { waitFor } from '../helpers/wait-for.js';

/**
 * The simulated console holds to what the real one does (see the top of src/sim/telnet-server.ts):
 * checked byte by byte with a plain socket.
 */

const PASSWORD = 'sim-telnet-pw';
const LOG = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2} \d+\.\d{3} (INF|WRN|ERR|EXC) /;

class RawClient {
  raw = Buffer.alloc(0);
  closed = false;
  private constructor(readonly socket: Socket) {
    socket.on('data', (chunk: Buffer) => (this.raw = Buffer.concat([this.raw, chunk])));
    socket.on('close', () => (this.closed = true));
  }
  static async open(port: number): Promise<RawClient> {
    const socket = connect({ host: '127.0.0.1', port });
    await new Promise((resolve) => socket.once('connect', resolve));
    return new RawClient(socket);
  }
  get text(): string {
    return this.raw.toString('utf8');
  }
  /** Lines so far, without NULs (which are checked apart). */
  get lines(): string[] {
    return this.text.replaceAll('\0', '').split('\r\n');
  }
  send(line: string): void {
    this.socket.write(`${line}\r\n`);
  }
  waitFor(text: string): Promise<true> {
    return waitFor(() => this.text.includes(text), { what: JSON.stringify(text) });
  }
  close(): void {
    this.socket.destroy();
  }
}

async function loggedIn(server: FakeTelnetServer): Promise<RawClient> {
  const client = await RawClient.open(server.port);
  await client.waitFor('Please enter password:\r\n');
  client.send(PASSWORD);
  await client.waitFor("Press 'help' to get a list of all commands. Press 'exit' to end session.\r\n");
  client.raw = Buffer.alloc(0);
  return client;
}

describe('simulated 7 Days to Die telnet console', () => {
  let server: FakeTelnetServer;
  before(async () => {
    server = await startTelnetServer({ password: PASSWORD, players: ['Alice Smith'] });
  });
  after(() => server.close());

  test('login: prompt, "Logon successful.", three blank lines, the banner, every line CRLF', async () => {
    const client = await RawClient.open(server.port);
    await client.waitFor('Please enter password:\r\n');
    assert.equal(client.text, 'Please enter password:\r\n');
    client.send(PASSWORD);
    await client.waitFor("Press 'help'");
    assert.ok(client.text.startsWith('Please enter password:\r\nLogon successful.\r\n\r\n\r\n\r\n*** Connected with 7DTD server.\r\n'));
    assert.ok(client.text.endsWith("Press 'help' to get a list of all commands. Press 'exit' to end session.\r\n\r\n"));
    client.close();
  });

  test('a wrong password keeps the connection and asks again; log lines before login are NUL bytes', async () => {
    const client = await RawClient.open(server.port);
    await client.waitFor('Please enter password:\r\n');
    server.log('something happened');
    await waitFor(() => client.raw.includes(0), { what: 'a NUL byte' });
    assert.ok(!client.text.includes('something happened'));
    client.send('wrong');
    await client.waitFor('Password incorrect, please enter password:\r\n');
    assert.equal(client.closed, false);
    client.send(PASSWORD);
    await client.waitFor('Logon successful.\r\n');
    client.close();
  });

  test('too many failed logins: "Too many failed login attempts!" and the connection is closed', async () => {
    const strict = await startTelnetServer({ password: PASSWORD, failedLoginLimit: 2 });
    try {
      const client = await RawClient.open(strict.port);
      client.send('bad1');
      await client.waitFor('Password incorrect, please enter password:\r\n');
      client.send('bad2');
      await client.waitFor('Too many failed login attempts!\r\n');
      await waitFor(() => client.closed, { what: 'the close' });
      assert.equal(strict.authFailures, 2);
    } finally {
      await strict.close();
    }
  });

  test('a known command: the Executing command log line, then its output; hidden with HideCommandExecutionLog', async () => {
    const client = await loggedIn(server);
    client.send('lp');
    await client.waitFor('in the game\r\n');
    const lines = client.lines.filter((l) => l !== '');
    assert.match(lines[0]!, LOG);
    assert.match(lines[0]!, /INF Executing command 'lp' by Telnet from 127\.0\.0\.1:\d+$/);
    assert.match(
      lines[1]!,
      /^0\. id=171, Alice Smith, pos=\(.*\), rot=\(.*\), remote=True, health=100, .*, pltfmid=Steam_\d{17}, crossid=EOS_[0-9a-f]{32}, ip=[\d.]+, ping=\d+$/,
    );
    assert.equal(lines[2], 'Total of 1 in the game');
    server.setHideCommandExecutionLog(1);
    client.raw = Buffer.alloc(0);
    client.send('gt');
    await client.waitFor('Day');
    assert.deepEqual(client.lines, ['Day 7, 21:42', '']);
    server.setHideCommandExecutionLog(0);
    client.close();
  });

  test('unknown commands: one error line, not logged; a throwing command: the failed line; an open quote', async () => {
    const client = await loggedIn(server);
    client.send('porter-end-abc');
    await client.waitFor("*** ERROR: unknown command 'porter-end-abc'\r\n");
    assert.equal(client.text, "*** ERROR: unknown command 'porter-end-abc'\r\n");
    server.setHandler((command) => {
      if (command === 'boom') throw new Error('bad things');
      return undefined;
    });
    client.raw = Buffer.alloc(0);
    client.send('boom');
    await client.waitFor("*** ERROR: Executing command 'boom' failed: bad things\r\n");
    assert.match(client.lines[0]!, /INF Executing command 'boom'/);
    server.setHandler(undefined);
    client.raw = Buffer.alloc(0);
    client.send('say "unclosed');
    await client.waitFor('*** ERROR: Quotation started at position 5 was not closed\r\n');
    client.close();
  });

  test('commands of one session run in order, each answer whole, and "exit" ends the session', async () => {
    const client = await loggedIn(server);
    client.socket.write('gt\r\nnope\r\ngt\r\n');
    await waitFor(() => client.lines.filter((l) => l === 'Day 7, 21:42').length === 2, { what: 'both answers' });
    const answers = client.lines.filter((l) => !LOG.test(l) && l !== '');
    assert.deepEqual(answers, ['Day 7, 21:42', "*** ERROR: unknown command 'nope'", 'Day 7, 21:42']);
    client.send('EXIT');
    await waitFor(() => client.closed, { what: 'the session to end' });
  });

  test('players join and leave with log lines; the old list format prints steamid', async () => {
    const client = await loggedIn(server);
    server.join({ name: 'Bob, the Builder', platformId: 'XBL_2535405', crossId: '<unknown>' });
    await client.waitFor("PlayerName='Bob, the Builder'");
    assert.match(client.lines[0]!, /INF PlayerSpawnedInWorld \(reason: JoinMultiplayer/);
    assert.deepEqual(server.online(), ['Alice Smith', 'Bob, the Builder']);
    server.world.legacyListFormat = true;
    client.raw = Buffer.alloc(0);
    client.send('listplayers');
    await client.waitFor('Total of 2');
    assert.ok(client.lines.some((l) => /, steamid=76561198\d+, ip=/.test(l)));
    server.world.legacyListFormat = false;
    server.leave('Bob, the Builder');
    await client.waitFor('Player disconnected');
    client.close();
  });

  test('executed records every command, listings and unknown ones flagged as queries', async () => {
    const client = await loggedIn(server);
    const from = server.executed.length;
    client.socket.write('give "Alice Smith" casinoCoin 5\r\nlp\r\nnope\r\n');
    await client.waitFor("unknown command 'nope'");
    assert.deepEqual(
      server.executed.slice(from).map((e) => [e.command, e.query]),
      [
        ['give "Alice Smith" casinoCoin 5', false],
        ['lp', true],
        ['nope', true],
      ],
    );
    client.close();
  });
});
