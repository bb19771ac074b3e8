import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createSocket, type Socket } from 'node:dgram';
import { decodeServerPacket, encodeAck, encodeCommand, encodeLogin, type ServerPacket } from '../../src/protocols/battleye/packet.js';
import { startBattlEyeServer, type BattlEyeServerOptions, type FakeBattlEyeServer } from '../../src/sim/faults/battleye-server.js';
import { simEchoText } from '../../src/sim/rcon-answers.js';
import { FakeClock, flush } from '../helpers/fake-clock.js';
import { waitFor } from '../helpers/wait-for.js';

/** A bare UDP client that records what the simulator sends and acknowledges nothing unless told. */
class Probe {
  readonly packets: ServerPacket[] = [];
  readonly #socket: Socket;

  private constructor(socket: Socket) {
    this.#socket = socket;
    socket.on('message', (datagram: Buffer) => {
      const decoded = decodeServerPacket(datagram);
      if ('packet' in decoded) this.packets.push(decoded.packet);
    });
  }

  static async connect(server: FakeBattlEyeServer): Promise<Probe> {
    const socket = createSocket('udp4');
    await new Promise<void>((resolve) => socket.connect(server.port, server.host, resolve));
    return new Probe(socket);
  }

  send(datagram: Buffer): void {
    this.#socket.send(datagram);
  }

  of<K extends ServerPacket['kind']>(kind: K): Extract<ServerPacket, { kind: K }>[] {
    return this.packets.filter((packet): packet is Extract<ServerPacket, { kind: K }> => packet.kind === kind);
  }

  close(): void {
    this.#socket.close();
  }
}

async function withServer(body: (server: FakeBattlEyeServer, probe: Probe) => Promise<void>, options: Partial<BattlEyeServerOptions> = {}) {
  const server = await startBattlEyeServer({ password: 'sim-pw', players: ['Survivor'], ...options });
  const probe = await Probe.connect(server);
  try {
    await body(server, probe);
  } finally {
    probe.close();
    await server.close();
  }
}

async function loggedIn(probe: Probe): Promise<void> {
  probe.send(encodeLogin('sim-pw'));
  await waitFor(() => probe.of('login')[0]?.accepted, { what: 'the login answer' });
}

describe('the simulated BattlEye RCon server', () => {
  test('a command before login gets nothing; a wrong password 0x00 0x00; the right one 0x00 0x01, then the admin message', async () => {
    await withServer(async (server, probe) => {
      probe.send(encodeCommand(0, 'players'));
      probe.send(encodeLogin('wrong'));
      await waitFor(() => probe.of('login').length === 1, { what: 'the refusal' });
      assert.equal(probe.of('login')[0]!.accepted, false);
      assert.equal(server.stats.authFailures, 1);
      probe.send(encodeLogin('sim-pw'));
      await waitFor(() => probe.of('message').length === 1, { what: 'the login message' });
      assert.equal(probe.of('login')[1]!.accepted, true);
      assert.match(probe.of('message')[0]!.body.toString(), /^RCon admin #0 \(127\.0\.0\.1:\d+\) logged in$/);
      assert.equal(probe.of('answer').length, 0, 'the command before login was not answered');
      assert.equal(server.executed.length, 0);
    });
  });

  test('RCon disabled (no password): a login gets no answer at all', async () => {
    await withServer(
      async (server, probe) => {
        probe.send(encodeLogin(''));
        await waitFor(() => server.stats.unansweredLogins === 1, { what: 'the login to arrive' });
        assert.equal(probe.packets.length, 0);
      },
      { password: '' },
    );
  });

  test('a long answer goes in parts of at most partBytes, each with 0x00 total index; reversed on request', async () => {
    await withServer(
      async (server, probe) => {
        await loggedIn(probe);
        probe.send(encodeCommand(7, 'porter-sim echo 250'));
        await waitFor(() => probe.of('answer').length === 3, { what: 'three parts' });
        assert.deepEqual(
          probe.of('answer').map((part) => [part.seq, part.total, part.index, part.body.length]),
          [
            [7, 3, 0, 100],
            [7, 3, 1, 100],
            [7, 3, 2, 50],
          ],
        );
        assert.equal(Buffer.concat(probe.of('answer').map((part) => part.body)).toString(), simEchoText(250));
        server.setPartOrder('reversed');
        probe.send(encodeCommand(8, 'porter-sim echo 250'));
        await waitFor(() => probe.of('answer').length === 6, { what: 'three more parts' });
        assert.deepEqual(
          probe
            .of('answer')
            .slice(3)
            .map((part) => part.index),
          [2, 1, 0],
        );
        probe.send(encodeCommand(9, 'say -1 short'));
        await waitFor(() => probe.of('answer').length === 7, { what: 'the short answer' });
        assert.deepEqual(probe.of('answer')[6], { kind: 'answer', seq: 9, total: 1, index: 0, body: Buffer.alloc(0) });
      },
      { partBytes: 100 },
    );
  });

  test('an unacknowledged message is sent 5 times, 2 s apart; after 10 s the client is dropped and answered no more', async () => {
    const clock = new FakeClock();
    await withServer(
      async (server, probe) => {
        await loggedIn(probe);
        await waitFor(() => probe.of('message').length === 1, { what: 'the first send' });
        for (let send = 2; send <= 5; send += 1) {
          clock.advance(2000);
          await waitFor(() => probe.of('message').length === send, { what: `send ${send}` });
        }
        assert.ok(probe.of('message').every((message) => message.seq === 0));
        assert.equal(server.clients, 1);
        clock.advance(2000);
        await waitFor(() => server.clients === 0, { what: 'the client to be dropped' });
        assert.equal(server.stats.droppedClients, 1);
        probe.send(encodeCommand(0, 'players'));
        await waitFor(() => server.stats.ignored === 1, { what: 'the command to be ignored' });
        assert.equal(probe.of('answer').length, 0);
        assert.equal(server.executed.length, 0);
      },
      { clock },
    );
  });

  test('an acknowledged message is not sent again', async () => {
    const clock = new FakeClock();
    await withServer(
      async (server, probe) => {
        await loggedIn(probe);
        for (let i = 0; i < 20; i += 1) server.broadcast(`message ${i}`);
        await waitFor(() => probe.of('message').length === 21, { what: 'every message' });
        for (const message of probe.of('message')) probe.send(encodeAck(message.seq));
        await waitFor(() => server.unacknowledged === 0, { what: 'the acks to land' });
        clock.advance(20_000);
        await waitFor(() => server.stats.acks === 21, { what: 'the acks to be counted' });
        assert.equal(probe.of('message').length, 21, 'nothing was sent again');
        assert.equal(server.clients, 1);
      },
      { clock },
    );
  });

  test('a flood to a client that acknowledges nothing holds at most one message per sequence number', async () => {
    const clock = new FakeClock();
    await withServer(
      async (server, probe) => {
        await loggedIn(probe);
        for (let i = 0; i < 1000; i += 1) server.broadcast(`message ${i}`);
        assert.equal(server.unacknowledged, 256);
        for (let step = 0; step < 5; step += 1) {
          clock.advance(2000);
          await flush();
        }
        await waitFor(() => server.clients === 0, { what: 'the client to be dropped' });
        assert.equal(server.unacknowledged, 0);
      },
      { clock },
    );
  });

  test('a client that sends no command for 45 s is dropped; an empty command before that keeps it', async () => {
    const clock = new FakeClock();
    await withServer(
      async (server, probe) => {
        await loggedIn(probe);
        probe.send(encodeAck(0));
        await waitFor(() => server.unacknowledged === 0, { what: 'the ack' });
        clock.advance(40_000);
        probe.send(encodeCommand(0, ''));
        await waitFor(() => probe.of('answer').length === 1, { what: 'the keepalive answer' });
        assert.equal(server.stats.keepalives, 1);
        clock.advance(46_000);
        probe.send(encodeCommand(1, 'players'));
        await waitFor(() => server.stats.droppedClients === 1, { what: 'the silent client to be dropped' });
        assert.equal(probe.of('answer').length, 1);
        assert.equal(server.executed.length, 0);
      },
      { clock },
    );
  });

  test('every command datagram runs once and is logged once; faults drop it or its answer; silence answers nothing', async () => {
    await withServer(async (server, probe) => {
      await loggedIn(probe);
      server.failNext('drop-answer');
      probe.send(encodeCommand(1, 'say -1 one'));
      server.failNext('drop-command');
      probe.send(encodeCommand(2, 'say -1 two'));
      probe.send(encodeCommand(3, 'say -1 three'));
      await waitFor(() => probe.of('answer').length === 1, { what: 'the third answer' });
      assert.equal(probe.of('answer')[0]!.seq, 3);
      assert.deepEqual(
        server.executed.map((entry) => entry.command),
        ['say -1 one', 'say -1 three'],
      );
      server.silent(true);
      const ignored = server.stats.ignored;
      probe.send(encodeCommand(4, 'say -1 four'));
      probe.send(encodeCommand(5, 'players'));
      await waitFor(() => server.stats.ignored === ignored + 2, { what: 'the silent server to hear nothing' });
      server.silent(false);
      probe.send(encodeCommand(6, 'players'));
      await waitFor(() => probe.of('answer').length === 2, { what: 'the answer after the silence' });
      assert.equal(probe.of('answer')[1]!.seq, 6);
      assert.equal(server.executed.filter((entry) => entry.command === 'say -1 four').length, 0);
    });
  });

  test('players joining and leaving: the table changes and every client is told', async () => {
    await withServer(async (server, probe) => {
      await loggedIn(probe);
      server.join({ name: 'Smith, John', lobby: true });
      server.leave('Survivor');
      await waitFor(() => probe.of('message').length === 3, { what: 'the join and leave messages' });
      assert.match(probe.of('message')[1]!.body.toString(), /^Player #1 Smith, John \(.*\) connected$/);
      assert.equal(probe.of('message')[2]!.body.toString(), 'Player #0 Survivor disconnected');
      probe.send(encodeCommand(0, 'players'));
      await waitFor(() => probe.of('answer').length === 1, { what: 'the table' });
      assert.match(probe.of('answer')[0]!.body.toString(), /\(OK\) Smith, John \(Lobby\)\n\(1 players in total\)$/);
    });
  });

  test('down and up: the same port, logins kept only if the client logs in again', async () => {
    await withServer(async (server, probe) => {
      await loggedIn(probe);
      const port = server.port;
      await server.down();
      await server.up();
      assert.equal(server.port, port);
      server.dropClients();
      probe.send(encodeCommand(0, 'players'));
      await waitFor(() => server.stats.ignored === 1, { what: 'the command from a forgotten client' });
      assert.equal(server.executed.length, 0);
    });
  });
});
