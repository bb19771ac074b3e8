import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { encodePacket, PacketDecoder, PacketType, type RconPacket } from '../../../src/protocols/rcon/codec.js';
import { MINECRAFT_PROBE_TYPE, planAuth, planCommand } from '../../../src/protocols/rcon/exchange.js';

const packet = (id: number, type: number, body: string | Buffer = ''): RconPacket =>
  new PacketDecoder().push(encodePacket(id, type, body)).packets[0]!;
const ids = (maxAnswerBytes = 1024 * 1024) => {
  let next = 10;
  return { nextId: () => next++, maxAnswerBytes };
};

describe('planCommand', () => {
  test('minecraft: one packet first, the probe only after the first fragment, done on the probe answer', () => {
    const exchange = planCommand('minecraft', 'list', ids());
    assert.equal(exchange.initial.length, 1, 'never two packets back to back');
    const first = exchange.accept(packet(10, 0, 'a'.repeat(4096)));
    assert.equal(first.kind, 'more');
    const probe = new PacketDecoder().push((first as { write: Buffer }).write).packets[0]!;
    assert.deepEqual([probe.id, probe.type], [11, MINECRAFT_PROBE_TYPE]);
    assert.deepEqual(exchange.accept(packet(10, 0, 'b')), { kind: 'more' });
    assert.deepEqual(exchange.accept(packet(99, 0, 'stray')), { kind: 'ignore' });
    assert.deepEqual(exchange.accept(packet(11, 0, 'Unknown request c8')), { kind: 'done' });
    assert.equal(exchange.text(), `${'a'.repeat(4096)}b`);
    assert.equal(exchange.fragments, 2);
  });

  test('minecraft: a first piece under 4,096 bytes is the whole answer: done at once, no probe', () => {
    const exchange = planCommand('minecraft', 'give Steve diamond 1', ids());
    assert.deepEqual(exchange.accept(packet(10, 0, 'Gave 1 [Diamond] to Steve')), { kind: 'done' });
    assert.equal(exchange.text(), 'Gave 1 [Diamond] to Steve');
    const empty = planCommand('minecraft', 'say hi', ids());
    assert.deepEqual(empty.accept(packet(10, 0, '')), { kind: 'done' });
  });

  test('minecraft: 4,096 bytes of fewer characters (multi-byte text) still gets the probe', () => {
    const exchange = planCommand('minecraft', 'list', ids());
    const body = Buffer.from('é'.repeat(2048)); // 2,048 characters, 4,096 bytes
    assert.equal(exchange.accept(packet(10, 0, body)).kind, 'more');
    assert.ok((exchange.accept(packet(10, 0, 'x')) as { kind: string }).kind === 'more');
  });

  test('source: command and empty RESPONSE_VALUE together; the mirror ends the answer', () => {
    const exchange = planCommand('source', 'status', ids());
    const sent = exchange.initial.map((bytes) => new PacketDecoder().push(bytes).packets[0]!);
    assert.deepEqual(
      sent.map((p) => [p.id, p.type, p.body.length]),
      [
        [10, PacketType.EXECCOMMAND, 6],
        [11, PacketType.RESPONSE_VALUE, 0],
      ],
    );
    assert.equal(exchange.accept(packet(10, 0, 'part1 ')).kind, 'more');
    assert.equal(exchange.accept(packet(10, 0, 'part2')).kind, 'more');
    assert.equal(exchange.accept(packet(11, 0, '')).kind, 'done');
    assert.equal(exchange.text(), 'part1 part2');
  });

  test('source: joins a UTF-8 character split across two packets', () => {
    const bytes = Buffer.from('€');
    const exchange = planCommand('source', 'x', ids());
    exchange.accept(packet(10, 0, bytes.subarray(0, 1)));
    exchange.accept(packet(10, 0, bytes.subarray(1)));
    assert.equal(exchange.text(), '€');
  });

  test('id0: the next packet is the answer, whatever its id', () => {
    const exchange = planCommand('id0', 'ShowPlayers', ids());
    assert.equal(exchange.accept(packet(0, 0, 'name,playeruid,steamid\n')).kind, 'done');
    assert.equal(exchange.text(), 'name,playeruid,steamid\n');
  });

  for (const flavour of ['minecraft', 'source'] as const) {
    test(`${flavour}: an id-0 answer before any fragment is this request's answer, marked as such`, () => {
      const exchange = planCommand(flavour, 'Info', ids());
      assert.deepEqual(exchange.accept(packet(0, PacketType.RESPONSE_VALUE, 'Welcome to Pal Server')), { kind: 'done', idZero: true });
      assert.equal(exchange.text(), 'Welcome to Pal Server');
      // Conan Exiles answers with type 2.
      assert.deepEqual(planCommand(flavour, 'x', ids()).accept(packet(0, PacketType.AUTH_RESPONSE, 'ok')), { kind: 'done', idZero: true });
    });

    test(`${flavour}: an id-0 packet of another type (Squad's chat) or after a fragment with our id is not an answer`, () => {
      assert.deepEqual(planCommand(flavour, 'x', ids()).accept(packet(0, 1, '[ChatAll] hi')), { kind: 'ignore' });
      const exchange = planCommand(flavour, 'x', ids());
      assert.equal(exchange.accept(packet(10, 0, 'a'.repeat(5000))).kind, 'more');
      assert.deepEqual(exchange.accept(packet(0, 0, 'console noise')), { kind: 'ignore' });
    });
  }

  for (const flavour of ['minecraft', 'source', 'id0'] as const) {
    test(`${flavour}: an answer growing past maxAnswerBytes overflows, keeping nothing more`, () => {
      const exchange = planCommand(flavour, 'x', ids(10_000));
      const replyId = flavour === 'id0' ? 0 : 10;
      if (flavour !== 'id0') {
        for (let i = 0; i < 2; i += 1) assert.equal(exchange.accept(packet(replyId, 0, 'a'.repeat(4096))).kind, 'more');
      }
      const last = exchange.accept(packet(replyId, 0, 'b'.repeat(flavour === 'id0' ? 10_001 : 4096)));
      assert.deepEqual(last, { kind: 'overflow' });
      assert.ok(Buffer.byteLength(exchange.text()) <= 10_000);
    });
  }
});

describe('planAuth', () => {
  test('skips the empty RESPONSE_VALUE srcds sends first, so a wrong password is not taken for a login', () => {
    const auth = planAuth('secret', 5);
    assert.equal(auth.accept(packet(5, PacketType.RESPONSE_VALUE)), 'wait');
    assert.equal(auth.accept(packet(-1, PacketType.AUTH_RESPONSE)), 'rejected');
  });

  test('accepts the AUTH_RESPONSE with the request id, or id 0 from id-0 servers', () => {
    assert.equal(planAuth('secret', 5).accept(packet(5, PacketType.AUTH_RESPONSE)), 'accepted');
    assert.equal(planAuth('secret', 5).accept(packet(0, PacketType.AUTH_RESPONSE)), 'accepted');
  });
});
