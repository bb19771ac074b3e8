import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  decodeClientPacket,
  decodeServerPacket,
  encodeAck,
  encodeAnswer,
  encodeCommand,
  encodeLogin,
  encodeLoginAnswer,
  encodeMessage,
} from '../../../src/protocols/battleye/packet.js';
import { AnswerParts } from '../../../src/protocols/battleye/answer-parts.js';

/**
 * Datagrams as BattlEye's BERConProtocol.txt lays them out. The expected bytes below are written
 * out by hand from that layout, with the checksum from a bitwise CRC32 in this file (no zlib): a
 * wrong byte order or a checksum over the wrong range shows here.
 */
describe('BattlEye RCon datagrams', () => {
  test('a login is B E, the CRC32 of 0xFF and the payload (little-endian), 0xFF, 0x00, the password', () => {
    // Python: zlib.crc32(bytes.fromhex('ff0070617373776f7264')).to_bytes(4, 'little').hex()
    assert.equal(crcHex('ff0070617373776f7264'), 'de262d52');
    assert.equal(encodeLogin('password').toString('hex'), `4245${crcHex('ff0070617373776f7264')}ff0070617373776f7264`);
  });

  test('a command carries its sequence number; an ack is 0x02 and the sequence number', () => {
    assert.equal(encodeCommand(255, 'players').toString('hex'), `4245${crcHex('ff01ff706c6179657273')}ff01ff706c6179657273`);
    assert.equal(encodeAck(7).toString('hex'), `4245${crcHex('ff0207')}ff0207`);
    assert.equal(encodeCommand(256, '').subarray(7).toString('hex'), '0100', 'sequence numbers are one byte and wrap');
  });

  test('server datagrams decode: login, a whole answer, a part of a split one, a message', () => {
    assert.deepEqual(decodeServerPacket(encodeLoginAnswer(true)), { packet: { kind: 'login', accepted: true } });
    assert.deepEqual(decodeServerPacket(encodeLoginAnswer(false)), { packet: { kind: 'login', accepted: false } });
    assert.deepEqual(decodeServerPacket(encodeAnswer(3, Buffer.from('hi'))), {
      packet: { kind: 'answer', seq: 3, total: 1, index: 0, body: Buffer.from('hi') },
    });
    assert.deepEqual(decodeServerPacket(encodeAnswer(3, Buffer.alloc(0))), {
      packet: { kind: 'answer', seq: 3, total: 1, index: 0, body: Buffer.alloc(0) },
    });
    assert.deepEqual(decodeServerPacket(encodeAnswer(9, Buffer.from('b'), { total: 3, index: 2 })), {
      packet: { kind: 'answer', seq: 9, total: 3, index: 2, body: Buffer.from('b') },
    });
    assert.deepEqual(decodeServerPacket(encodeMessage(200, 'RCon admin #0 (127.0.0.1:5000) logged in')), {
      packet: { kind: 'message', seq: 200, body: Buffer.from('RCon admin #0 (127.0.0.1:5000) logged in') },
    });
  });

  test('client datagrams decode for the simulator', () => {
    assert.deepEqual(decodeClientPacket(encodeLogin('pw')), { packet: { kind: 'login', password: Buffer.from('pw') } });
    assert.deepEqual(decodeClientPacket(encodeCommand(1, 'say -1 hi')), {
      packet: { kind: 'command', seq: 1, body: Buffer.from('say -1 hi') },
    });
    assert.deepEqual(decodeClientPacket(encodeAck(4)), { packet: { kind: 'ack', seq: 4 } });
  });

  test('what is not BattlEye RCon is named, never thrown', () => {
    const good = encodeAnswer(1, Buffer.from('x'));
    const flipped = Buffer.from(good);
    flipped[good.length - 1]! ^= 0x01;
    const wrongMagic = Buffer.from(good);
    wrongMagic[0] = 0x41;
    const noFF = Buffer.from(good);
    noFF[6] = 0xfe;
    assert.deepEqual(decodeServerPacket(flipped), { problem: 'checksum' });
    assert.deepEqual(decodeServerPacket(wrongMagic), { problem: 'header' });
    assert.deepEqual(decodeServerPacket(noFF), { problem: 'header' });
    assert.deepEqual(decodeServerPacket(Buffer.from('BE')), { problem: 'short' });
    assert.deepEqual(decodeServerPacket(Buffer.alloc(0)), { problem: 'short' });
    assert.deepEqual(decodeServerPacket(framed('01')), { problem: 'malformed' }, 'a command answer without its sequence number');
    assert.deepEqual(decodeServerPacket(framed('0002')), { problem: 'malformed' }, 'a login answer that is neither 0 nor 1');
    assert.deepEqual(decodeServerPacket(framed('07')), { problem: 'type' });
    assert.deepEqual(decodeServerPacket(encodeAnswer(1, Buffer.from([0x00, 0x02]))), { problem: 'malformed' }, 'a part header cut short');
    assert.deepEqual(decodeServerPacket(encodeAnswer(1, Buffer.alloc(0), { total: 2, index: 2 })), { problem: 'malformed' });
    assert.deepEqual(decodeServerPacket(encodeAnswer(1, Buffer.alloc(0), { total: 0, index: 0 })), { problem: 'malformed' });
  });
});

describe('AnswerParts', () => {
  test('parts in any order make the answer; a UTF-8 character split between parts survives', () => {
    const text = Buffer.from('Jürgen ★ joined', 'utf8');
    const parts = new AnswerParts(1024);
    assert.equal(parts.add(3, 2, text.subarray(10)), 'partial');
    assert.equal(parts.add(3, 0, text.subarray(0, 2)), 'partial');
    assert.equal(parts.add(3, 1, text.subarray(2, 10)), 'complete');
    assert.equal(parts.text(), 'Jürgen ★ joined');
  });

  test('a repeated index and a total unlike the first part are rejected, not stored', () => {
    const parts = new AnswerParts(1024);
    assert.equal(parts.add(2, 0, Buffer.from('a')), 'partial');
    assert.equal(parts.add(2, 0, Buffer.from('X')), 'rejected');
    assert.equal(parts.add(3, 1, Buffer.from('X')), 'rejected');
    assert.equal(parts.add(2, 1, Buffer.from('b')), 'complete');
    assert.equal(parts.text(), 'ab');
  });

  test('parts together over the cap end the answer', () => {
    const parts = new AnswerParts(4);
    assert.equal(parts.add(2, 0, Buffer.from('abc')), 'partial');
    assert.equal(parts.add(2, 1, Buffer.from('de')), 'too-large');
  });
});

/** A datagram around any payload, checksum right. */
function framed(payloadHex: string): Buffer {
  return Buffer.from(`4245${crcHex(`ff${payloadHex}`)}ff${payloadHex}`, 'hex');
}

/** CRC32 (IEEE) of hex bytes, little-endian hex, from a table-free bitwise loop: no zlib involved. */
function crcHex(hex: string): string {
  let crc = 0xffffffff;
  for (const byte of Buffer.from(hex, 'hex')) {
    crc ^= byte;
    for (let bit = 0; bit < 8; bit += 1) crc = crc & 1 ? (crc >>> 1) ^ 0xedb88320 : crc >>> 1;
  }
  const out = Buffer.alloc(4);
  out.writeUInt32LE((crc ^ 0xffffffff) >>> 0);
  return out.toString('hex');
}
