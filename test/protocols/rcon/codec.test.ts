import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { bodyText, encodePacket, PacketDecoder, PacketType } from '../../../src/protocols/rcon/codec.js';
import { RconProtocolError } from '../../../src/protocols/rcon/errors.js';

describe('encodePacket', () => {
  test('lays out length, id, type, body and two NULs, little-endian', () => {
    const packet = encodePacket(7, PacketType.EXECCOMMAND, 'list');
    assert.deepEqual([...packet], [14, 0, 0, 0, 7, 0, 0, 0, 2, 0, 0, 0, ...Buffer.from('list'), 0, 0]);
  });

  test('encodes negative ids and UTF-8 bodies by byte length', () => {
    const packet = encodePacket(-1, PacketType.AUTH_RESPONSE, 'é');
    assert.equal(packet.readInt32LE(0), 12);
    assert.equal(packet.readInt32LE(4), -1);
    assert.equal(packet.length, 16);
  });
});

describe('PacketDecoder', () => {
  const a = encodePacket(1, 0, 'first');
  const b = encodePacket(2, 0, '');
  const c = encodePacket(3, 2, 'x'.repeat(4096));

  test('decodes packets split at every byte boundary', () => {
    const stream = Buffer.concat([a, b, c]);
    for (const cut of [1, 3, 4, 5, 11, 12, 13, a.length - 1, a.length, a.length + 2]) {
      const decoder = new PacketDecoder();
      const got = [...decoder.push(stream.subarray(0, cut)).packets, ...decoder.push(stream.subarray(cut)).packets];
      assert.deepEqual(
        got.map((p) => [p.id, p.type, bodyText(p.body)]),
        [
          [1, 0, 'first'],
          [2, 0, ''],
          [3, 2, 'x'.repeat(4096)],
        ],
        `cut at ${cut}`,
      );
      assert.equal(decoder.pendingBytes, 0);
    }
  });

  test('decodes one byte at a time', () => {
    const decoder = new PacketDecoder();
    const got = [];
    for (const byte of Buffer.concat([a, c])) got.push(...decoder.push(Buffer.from([byte])).packets);
    assert.deepEqual(
      got.map((p) => p.id),
      [1, 3],
    );
  });

  test('decodes several packets coalesced in one chunk', () => {
    const got = new PacketDecoder().push(Buffer.concat([a, b, c, a])).packets;
    assert.deepEqual(
      got.map((p) => p.id),
      [1, 2, 3, 1],
    );
  });

  test('keeps body bytes after a NUL (srcds extra packet) but bodyText stops at it', () => {
    const [packet] = new PacketDecoder().push(encodePacket(9, 0, Buffer.from([0, 1, 0, 0]))).packets;
    assert.deepEqual([...packet!.body], [0, 1, 0, 0]);
    assert.equal(bodyText(packet!.body), '');
  });

  test('rejects a length below 10 as a protocol error', () => {
    const bad = Buffer.alloc(14);
    bad.writeInt32LE(9, 0);
    assert.ok(new PacketDecoder().push(bad).error instanceof RconProtocolError);
  });

  test('rejects a negative length', () => {
    const bad = Buffer.alloc(8);
    bad.writeInt32LE(-5, 0);
    assert.ok(new PacketDecoder().push(bad).error instanceof RconProtocolError);
  });

  test('rejects a length over the bound as soon as the length is known', () => {
    const decoder = new PacketDecoder({ maxPacketLength: 4096 + 10 });
    const header = Buffer.alloc(4);
    header.writeInt32LE(4096 + 11, 0);
    assert.match(decoder.push(header).error?.message ?? '', /4107 bytes \(allowed 10–4106\)/);
    assert.deepEqual(new PacketDecoder({ maxPacketLength: 4106 }).push(encodePacket(1, 0, 'y'.repeat(4096))).packets.length, 1);
  });

  test('a 2 GB length field is refused from its 4 bytes alone, split or not, holding nothing', () => {
    for (const field of [0x7fffffff, 0x80000000 | 0, -1]) {
      const header = Buffer.alloc(4);
      header.writeInt32LE(field, 0);
      const decoder = new PacketDecoder();
      assert.equal(decoder.push(header.subarray(0, 3)).error, undefined);
      const decoded = decoder.push(Buffer.concat([header.subarray(3), Buffer.alloc(1024)]));
      assert.ok(decoded.error instanceof RconProtocolError, `length ${field}`);
      assert.equal(decoder.pendingBytes, 0);
    }
  });

  test('packets before a bad length in the same chunk are still returned', () => {
    const bad = Buffer.alloc(4);
    bad.writeInt32LE(3, 0);
    const decoded = new PacketDecoder().push(Buffer.concat([a, b, bad]));
    assert.deepEqual(
      decoded.packets.map((p) => p.id),
      [1, 2],
    );
    assert.ok(decoded.error instanceof RconProtocolError);
  });

  test('by default accepts a 4,096-character Minecraft fragment of three-byte characters', () => {
    const wide = '€'.repeat(4096);
    const [packet] = new PacketDecoder().push(encodePacket(1, 0, wide)).packets;
    assert.equal(bodyText(packet!.body), wide);
  });

  test('rejects an HTTP answer (wrong port) and stays failed', () => {
    const decoder = new PacketDecoder();
    assert.match(decoder.push(Buffer.from('HTTP/1.1 400 Bad Request\r\n\r\n')).error?.message ?? '', /does not speak Source RCON/);
    const later = decoder.push(encodePacket(1, 0, 'ok'));
    assert.deepEqual(later.packets, []);
    assert.ok(later.error instanceof RconProtocolError);
  });
});
