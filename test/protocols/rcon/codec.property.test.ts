import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { encodePacket, LENGTH_PREFIX_BYTES, MIN_PACKET_LENGTH, PacketDecoder } from '../../../src/protocols/rcon/codec.js';
import { RconProtocolError } from '../../../src/protocols/rcon/errors.js';
import { fcOptions } from '../../helpers/fc-options.js';

/**
 * Whatever bytes a game server sends, chunked however TCP delivers them, the
 * decoder yields packets or a clean protocol error (never an exception, never a packet mixed from
 * two), and holds at most one packet's worth of bytes. Seeded (see fcOptions): PORTER_FC_SEED
 * replays a failure.
 */

const MAX_PACKET = 512;

type Summary = [id: number, type: number, body: string];

/** The framing rule stated as plainly as possible, on the whole stream at once. */
function reference(stream: Buffer, maxPacketLength: number): { packets: Summary[]; error: boolean } {
  const packets: Summary[] = [];
  let offset = 0;
  while (stream.length - offset >= LENGTH_PREFIX_BYTES) {
    const length = stream.readInt32LE(offset);
    if (length < MIN_PACKET_LENGTH || length > maxPacketLength) return { packets, error: true };
    if (offset + LENGTH_PREFIX_BYTES + length > stream.length) break;
    const start = offset + LENGTH_PREFIX_BYTES;
    packets.push([
      stream.readInt32LE(start),
      stream.readInt32LE(start + 4),
      stream.subarray(start + 8, start + length - 2).toString('hex'),
    ]);
    offset = start + length;
  }
  return { packets, error: false };
}

const int32 = fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 });

/** Pieces a hostile or broken server may send: real packets, any length field, any bytes. */
const segment = fc.oneof(
  {
    weight: 5,
    arbitrary: fc
      .tuple(int32, int32, fc.uint8Array({ maxLength: 300 }))
      .map(([id, type, body]) => encodePacket(id, type, Buffer.from(body))),
  },
  { weight: 1, arbitrary: int32.map((length) => Buffer.from(new Int32Array([length]).buffer)) },
  {
    weight: 1,
    arbitrary: fc
      .oneof(fc.constant(0x7fffffff), fc.constant(-1), fc.constant(MAX_PACKET + 1), fc.constant(MIN_PACKET_LENGTH - 1))
      .map((length) => Buffer.from(new Int32Array([length]).buffer)),
  },
  { weight: 2, arbitrary: fc.uint8Array({ maxLength: 64 }).map((bytes) => Buffer.from(bytes)) },
);

/** A stream and the points where TCP cuts it into chunks. */
const chunkedStream = (pieces: fc.Arbitrary<Buffer[]>) =>
  pieces.chain((parts) => {
    const stream = Buffer.concat(parts);
    return fc.tuple(fc.constant(stream), fc.uniqueArray(fc.integer({ min: 0, max: stream.length }), { maxLength: 40 }));
  });

function chunksOf(stream: Buffer, cuts: readonly number[]): Buffer[] {
  const points = [0, ...[...cuts].sort((a, b) => a - b), stream.length];
  return points.slice(1).map((end, i) => stream.subarray(points[i], end));
}

function feed(decoder: PacketDecoder, chunks: readonly Buffer[]): { packets: Summary[]; error: RconProtocolError | undefined } {
  const packets: Summary[] = [];
  let error: RconProtocolError | undefined;
  for (const chunk of chunks) {
    const decoded = decoder.push(chunk);
    if (error) {
      assert.deepEqual(decoded.packets, [], 'a failed decoder yields nothing more');
      assert.equal(decoded.error, error, 'and keeps its error');
    }
    packets.push(...decoded.packets.map((p): Summary => [p.id, p.type, p.body.toString('hex')]));
    error ??= decoded.error;
    assert.ok(decoder.pendingBytes <= LENGTH_PREFIX_BYTES + MAX_PACKET, `holds ${decoder.pendingBytes} bytes`);
  }
  return { packets, error };
}

describe('PacketDecoder, property-based', () => {
  test('any bytes, chunked anywhere: the same packets as the whole stream, or a clean protocol error', () => {
    fc.assert(
      fc.property(chunkedStream(fc.array(segment, { maxLength: 12 })), ([stream, cuts]) => {
        const expected = reference(stream, MAX_PACKET);
        const got = feed(new PacketDecoder({ maxPacketLength: MAX_PACKET }), chunksOf(stream, cuts));
        assert.deepEqual(got.packets, expected.packets);
        assert.equal(got.error !== undefined, expected.error);
        if (got.error) assert.ok(got.error instanceof RconProtocolError);
      }),
      fcOptions({ numRuns: 400 }),
    );
  });

  test('well-formed packets, chunked anywhere, come back exactly as sent', () => {
    const packet = fc.record({ id: int32, type: int32, body: fc.uint8Array({ maxLength: MAX_PACKET - MIN_PACKET_LENGTH }) });
    fc.assert(
      fc.property(
        fc.array(packet, { maxLength: 10 }).chain((packets) => {
          const stream = Buffer.concat(packets.map((p) => encodePacket(p.id, p.type, Buffer.from(p.body))));
          return fc.tuple(
            fc.constant(packets),
            fc.constant(stream),
            fc.uniqueArray(fc.integer({ min: 0, max: stream.length }), { maxLength: 60 }),
          );
        }),
        ([packets, stream, cuts]) => {
          const got = feed(new PacketDecoder({ maxPacketLength: MAX_PACKET }), chunksOf(stream, cuts));
          assert.equal(got.error, undefined);
          assert.deepEqual(
            got.packets,
            packets.map((p): Summary => [p.id, p.type, Buffer.from(p.body).toString('hex')]),
          );
        },
      ),
      fcOptions({ numRuns: 300 }),
    );
  });
});
