import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { AnswerParts } from '../../../src/protocols/battleye/answer-parts.js';
import { decodeServerPacket, encodeAnswer, encodeMessage } from '../../../src/protocols/battleye/packet.js';
import { fcOptions } from '../../helpers/fc-options.js';

/**
 * Whatever datagrams arrive (random bytes; the real parts of an answer split any way, in any order,
 * repeated; copies with a flipped bit; parts and messages for other sequence numbers), decoding
 * never throws, and the answer assembled for one sequence number is exactly the text the server
 * split, never more than the cap, never mixed with anything else. Seeded (see fcOptions).
 */

const SEQ = 42;
const CAP = 4096;

/** One command's answer as the connection assembles it: only answers for SEQ count. */
function assemble(datagrams: readonly Buffer[]): { outcome: string; text?: string } {
  const parts = new AnswerParts(CAP);
  for (const datagram of datagrams) {
    const decoded = decodeServerPacket(datagram);
    if ('problem' in decoded) continue;
    const packet = decoded.packet;
    if (packet.kind !== 'answer' || packet.seq !== SEQ) continue;
    const outcome = parts.add(packet.total, packet.index, packet.body);
    if (outcome === 'complete') return { outcome, text: parts.text() };
    if (outcome === 'too-large') return { outcome };
  }
  return { outcome: 'incomplete' };
}

function split(seq: number, body: Buffer, size: number): Buffer[] {
  if (body.length <= size) return [encodeAnswer(seq, body)];
  const total = Math.ceil(body.length / size);
  return Array.from({ length: total }, (_, index) => encodeAnswer(seq, body.subarray(index * size, (index + 1) * size), { total, index }));
}

const answerText = fc.string({ unit: 'binary', maxLength: 600 }).filter((text) => !text.startsWith('\0') && !text.includes('\0'));

describe('BattlEye datagrams, property-based', () => {
  test('random bytes never throw and never make an answer', () => {
    fc.assert(
      fc.property(fc.array(fc.uint8Array({ maxLength: 64 }), { maxLength: 40 }), (chunks) => {
        const datagrams = chunks.map((chunk) => Buffer.from(chunk));
        for (const datagram of datagrams) decodeServerPacket(datagram);
        assert.notEqual(assemble(datagrams).outcome, 'complete');
      }),
      fcOptions({ numRuns: 300 }),
    );
  });

  test('split, shuffled, repeated, bit-flipped and foreign datagrams: exactly the answer, or nothing', () => {
    fc.assert(
      fc.property(
        answerText,
        fc.integer({ min: 1, max: 200 }),
        fc.array(fc.nat(), { maxLength: 8 }),
        fc.array(fc.tuple(fc.nat(), fc.nat()), { maxLength: 6 }),
        fc.array(
          fc.integer({ min: 0, max: 255 }).filter((seq) => seq !== SEQ),
          { maxLength: 4 },
        ),
        fc.boolean(),
        (text, size, repeats, flips, otherSeqs, loseOne) => {
          const body = Buffer.from(text, 'utf8');
          const genuine = split(SEQ, body, size);
          const datagrams: Buffer[] = [...genuine];
          for (const pick of repeats) datagrams.push(Buffer.from(genuine[pick % genuine.length]!));
          for (const [pick, bit] of flips) {
            const copy = Buffer.from(genuine[pick % genuine.length]!);
            const at = bit % (copy.length * 8);
            copy[at >> 3]! ^= 1 << (at & 7);
            datagrams.push(copy);
          }
          for (const seq of otherSeqs) {
            datagrams.push(...split(seq, Buffer.from('someone else’s answer'), 5), encodeMessage(SEQ, 'Player #1 joined'));
          }
          // Any order: a stable shuffle driven by the generated numbers.
          const order = datagrams.map((datagram, index) => ({ datagram, key: (index * 7919 + (repeats[0] ?? 0)) % datagrams.length }));
          order.sort((a, b) => a.key - b.key);
          let shuffled = order.map((entry) => entry.datagram);
          if (loseOne && genuine.length > 1) shuffled = shuffled.filter((datagram) => datagram !== genuine[0]);
          const result = assemble(shuffled);
          if (body.length > CAP) {
            assert.equal(result.outcome, 'too-large');
          } else if (loseOne && genuine.length > 1 && !repeats.some((pick) => pick % genuine.length === 0)) {
            assert.equal(result.outcome, 'incomplete', 'a lost part can only mean no answer');
          } else {
            assert.equal(result.outcome, 'complete');
            assert.equal(result.text, body.toString('utf8'));
          }
        },
      ),
      fcOptions({ numRuns: 300 }),
    );
  });
});
