import { after, afterEach, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { bodyText, encodePacket, PacketType } from '../../src/protocols/rcon/codec.js';
import { simEchoText } from '../../src/sim/rcon-answers.js';
import { startRconServer, type FakeRconServer } from '../../src/sim/faults/rcon-server.js';
import { RawRconClient } from '../protocols/rcon/helpers/raw-client.js';
import { waitFor } from '../helpers/wait-for.js';

const PASSWORD = 'pw-for-the-fake';
const summary = (client: RawRconClient) => client.packets.map((p) => [p.id, p.type, bodyText(p.body)]);

async function loggedIn(server: FakeRconServer): Promise<RawRconClient> {
  const client = await RawRconClient.connect(server.port);
  client.send(1, PacketType.AUTH, PASSWORD);
  const expected = server.flavour === 'source' ? 2 : 1;
  await client.waitForPackets(expected);
  client.packets.length = 0;
  return client;
}

describe('fake RCON server, Minecraft flavour (vanilla RconClient behaviour)', () => {
  let server: FakeRconServer;
  const clients: RawRconClient[] = [];
  const track = (client: RawRconClient) => (clients.push(client), client);
  before(async () => {
    server = await startRconServer({ password: PASSWORD, players: ['Steve'] });
  });
  afterEach(() => {
    for (const client of clients.splice(0)) client.close();
  });
  after(() => server.close());

  test('login: a single AUTH_RESPONSE with the request id; id -1 for a wrong password, connection kept', async () => {
    const client = track(await RawRconClient.connect(server.port));
    client.send(42, PacketType.AUTH, 'wrong');
    await client.waitForPackets(1);
    client.send(43, PacketType.AUTH, PASSWORD);
    await client.waitForPackets(2);
    assert.deepEqual(summary(client), [
      [-1, 2, ''],
      [43, 2, ''],
    ]);
    assert.equal(client.isClosed, false);
  });

  test('an empty password never logs in', async () => {
    const empty = await startRconServer({ password: '' });
    try {
      const client = track(await RawRconClient.connect(empty.port));
      client.send(1, PacketType.AUTH, '');
      await client.waitForPackets(1);
      assert.deepEqual(summary(client), [[-1, 2, '']]);
    } finally {
      await empty.close();
    }
  });

  test('a command before login is answered with id -1 and not run', async () => {
    const client = track(await RawRconClient.connect(server.port));
    const before = server.executed.length;
    client.send(5, PacketType.EXECCOMMAND, 'give Steve diamond');
    await client.waitForPackets(1);
    assert.deepEqual(summary(client), [[-1, 2, '']]);
    assert.equal(server.executed.length, before);
  });

  test('unknown packet types: "Unknown request <hex>" with the request id, as Integer.toHexString prints it', async () => {
    const client = track(await loggedIn(server));
    client.send(7, 200);
    await client.waitForPackets(1);
    client.send(8, -5);
    await client.waitForPackets(2);
    client.send(9, PacketType.RESPONSE_VALUE);
    await client.waitForPackets(3);
    assert.deepEqual(summary(client), [
      [7, 0, 'Unknown request c8'],
      [8, 0, 'Unknown request fffffffb'],
      [9, 0, 'Unknown request 0'],
    ]);
  });

  test('answers split every 4,096 characters, each fragment its own packet with the request id, no end marker', async () => {
    const client = track(await loggedIn(server));
    client.send(11, PacketType.EXECCOMMAND, 'porter-sim echo 10000');
    await client.waitForPackets(3);
    client.send(12, 200);
    await client.waitForPackets(4);
    const text = simEchoText(10_000);
    assert.deepEqual(summary(client), [
      [11, 0, text.slice(0, 4096)],
      [11, 0, text.slice(4096, 8192)],
      [11, 0, text.slice(8192)],
      [12, 0, 'Unknown request c8'],
    ]);
  });

  test('an empty answer is one empty packet', async () => {
    const client = track(await loggedIn(server));
    client.send(3, PacketType.EXECCOMMAND, 'say hello');
    await client.waitForPackets(1);
    assert.deepEqual(summary(client), [[3, 0, '']]);
  });

  test('two packets in one read close the connection', async () => {
    const client = track(await loggedIn(server));
    const violations = server.framingViolations;
    client.write(Buffer.concat([encodePacket(1, 2, 'list'), encodePacket(2, 2, 'list')]));
    await client.closed;
    assert.equal(server.framingViolations, violations + 1);
    assert.equal(client.packets.length, 0);
  });

  test('a request of 1,446 bytes is read; 1,447 bytes closes the connection unrun', async () => {
    const client = track(await loggedIn(server));
    const fits = `say ${'x'.repeat(1442)}`;
    client.send(1, PacketType.EXECCOMMAND, fits);
    await client.waitForPackets(1);
    assert.equal(server.executed.at(-1)?.command, fits);

    const before = server.executed.length;
    client.send(2, PacketType.EXECCOMMAND, `say ${'x'.repeat(1443)}`);
    await client.closed;
    assert.equal(server.executed.length, before);
  });

  test('executed records what ran, in order, with list queries flagged', async () => {
    const client = track(await loggedIn(server));
    const start = server.executed.length;
    client.send(1, PacketType.EXECCOMMAND, 'list');
    await client.waitForPackets(1);
    client.send(2, PacketType.EXECCOMMAND, 'give Steve diamond');
    await client.waitForPackets(2);
    assert.deepEqual(
      server.executed.slice(start).map(({ command, query }) => ({ command, query })),
      [
        { command: 'list', query: true },
        { command: 'give Steve diamond', query: false },
      ],
    );
    assert.deepEqual(client.texts(), ['There are 1 of a max of 20 players online: Steve', 'Gave 1 [Diamond] to Steve']);
  });

  test('setHandler overrides answers; undefined falls back to the game', async () => {
    const client = track(await loggedIn(server));
    server.setHandler((command) => (command.startsWith('custom') ? 'handled' : undefined));
    try {
      client.send(1, PacketType.EXECCOMMAND, 'custom thing');
      await client.waitForPackets(1);
      client.send(2, PacketType.EXECCOMMAND, 'give Nobody stone');
      await client.waitForPackets(2);
      assert.deepEqual(client.texts(), ['handled', 'No player was found']);
    } finally {
      server.setHandler(undefined);
    }
  });
});

describe('fake RCON server, Source flavour (srcds behaviour)', () => {
  let server: FakeRconServer;
  before(async () => {
    server = await startRconServer({ password: PASSWORD, flavour: 'source', players: ['Alice'] });
  });
  after(() => server.close());

  test('login: an empty RESPONSE_VALUE first, then the AUTH_RESPONSE (id -1 when wrong)', async () => {
    const client = await RawRconClient.connect(server.port);
    try {
      client.send(5, PacketType.AUTH, 'nope');
      await client.waitForPackets(2);
      client.send(6, PacketType.AUTH, PASSWORD);
      await client.waitForPackets(4);
      assert.deepEqual(summary(client), [
        [5, 0, ''],
        [-1, 2, ''],
        [6, 0, ''],
        [6, 2, ''],
      ]);
    } finally {
      client.close();
    }
  });

  test('mirrors an empty RESPONSE_VALUE after the answer, then the extra 00 01 00 00 packet', async () => {
    const client = await loggedIn(server);
    try {
      // Back to back is fine for srcds: it reads a stream.
      client.write(Buffer.concat([encodePacket(20, 2, 'porter-sim echo 10000'), encodePacket(21, 0, '')]));
      await client.waitForPackets(5);
      const text = Buffer.from(simEchoText(10_000));
      assert.deepEqual(
        client.packets.map((p) => [p.id, p.type, p.body.length]),
        [
          [20, 0, 4096],
          [20, 0, 4096],
          [20, 0, 10_000 - 8192],
          [21, 0, 0],
          [21, 0, 4],
        ],
      );
      assert.deepEqual(Buffer.concat(client.packets.slice(0, 3).map((p) => p.body)), text);
      assert.deepEqual([...client.packets[4]!.body], [0x00, 0x01, 0x00, 0x00]);
    } finally {
      client.close();
    }
  });

  test('status lists the online players', async () => {
    const client = await loggedIn(server);
    try {
      client.send(1, 2, 'status');
      await client.waitForPackets(1);
      assert.match(client.texts()[0]!, /players : 1 humans, 0 bots \(20\/0 max\)/);
      assert.match(client.texts()[0]!, /^#\s+2 1 "Alice" STEAM_1:[01]:\d+ /m);
    } finally {
      client.close();
    }
  });
});

describe('fake RCON server, id0 flavour', () => {
  test('every answer carries id 0; a wrong password still gets -1', async () => {
    const server = await startRconServer({ password: PASSWORD, flavour: 'id0' });
    const client = await RawRconClient.connect(server.port);
    try {
      client.send(77, PacketType.AUTH, 'bad');
      await client.waitForPackets(1);
      client.send(78, PacketType.AUTH, PASSWORD);
      await client.waitForPackets(2);
      client.send(79, PacketType.EXECCOMMAND, 'Info');
      await client.waitForPackets(3);
      assert.deepEqual(summary(client), [
        [-1, 2, ''],
        [0, 2, ''],
        [0, 0, 'Welcome to Pal Server[v0.1.5.1] porter simulated server\n'],
      ]);
    } finally {
      client.close();
      await server.close();
    }
  });
});

describe('fake RCON server faults and lifecycle', () => {
  let server: FakeRconServer;
  before(async () => {
    server = await startRconServer({ password: PASSWORD, players: ['Steve'] });
  });
  after(() => server.close());

  test('hang: runs the command, never answers; list queries are not affected', async () => {
    const client = await loggedIn(server);
    try {
      server.failNext('hang');
      client.send(1, 2, 'list');
      await client.waitForPackets(1);
      client.send(2, 2, 'give Steve bread');
      await waitFor(() => server.executed.at(-1)?.command === 'give Steve bread', { what: 'the command to run' });
      client.send(3, 200);
      // Nothing more is read on a hung connection; prove it with a bounded wait for a packet that never comes.
      await assert.rejects(client.waitForPackets(2, 200), /timed out/);
      assert.equal(client.isClosed, false);
    } finally {
      client.close();
    }
  });

  test('close-without-running drops the connection and does not record the command', async () => {
    const client = await loggedIn(server);
    const before = server.executed.length;
    server.failNext('close-without-running');
    client.send(1, 2, 'give Steve bread');
    await client.closed;
    assert.equal(server.executed.length, before);
  });

  test('close-before-answer runs it and closes; close-after-answer answers then closes', async () => {
    const first = await loggedIn(server);
    server.failNext('close-before-answer');
    first.send(1, 2, 'give Steve bread');
    await first.closed;
    assert.equal(first.packets.length, 0);
    assert.equal(server.executed.at(-1)?.command, 'give Steve bread');

    const second = await loggedIn(server);
    server.failNext('close-after-answer');
    second.send(2, 2, 'give Steve cake');
    await second.closed;
    assert.deepEqual(second.texts(), ['Gave 1 [Cake] to Steve']);
  });

  test('flood: runs the command once, then sends its fragments without end and answers no probe, until the client leaves', async () => {
    const client = await loggedIn(server);
    const before = server.executed.length;
    server.failNext('flood');
    client.send(7, 2, 'give Steve bread');
    await client.waitForPackets(1);
    client.send(8, 200);
    await client.waitForPackets(64);
    assert.equal(server.executed.length, before + 1);
    assert.ok(
      client.packets.every((packet) => packet.id === 7 && packet.body.length === 4096),
      'only fragments of the command, no probe answer',
    );
    client.close();
    await waitFor(() => server.connections === 0, { what: 'the flooded connection to close' });
    const flooded = server.floodedBytes;
    assert.ok(flooded >= 64 * 4110);
    // Bounded: it stops with the connection, it does not buffer on for a client that left.
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(server.floodedBytes, flooded);
  });

  test('restart drops connections and listens on the same port; state survives', async () => {
    const client = await loggedIn(server);
    const port = server.port;
    server.join('Alex');
    await server.restart();
    await client.closed;
    assert.equal(server.port, port);
    assert.equal(server.connections, 0);
    const again = await loggedIn(server);
    try {
      again.send(1, 2, 'list');
      await again.waitForPackets(1);
      assert.deepEqual(again.texts(), ['There are 2 of a max of 20 players online: Steve, Alex']);
      assert.equal(server.connections, 1);
    } finally {
      again.close();
    }
  });

  test('join, leave and setOnline change what list shows', () => {
    server.setOnline(['A', 'B', 'a']);
    assert.deepEqual(server.online(), ['A', 'B'], 'names are unique regardless of case');
    server.join('C');
    server.join('c');
    server.leave('b');
    assert.deepEqual(server.online(), ['A', 'C']);
  });
});
