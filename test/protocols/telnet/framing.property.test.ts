import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { AnswerFrame, type FrameStep } from '../../../src/protocols/telnet/answer.js';
import { TelnetLineReader } from '../../../src/protocols/telnet/line-reader.js';
import { fcOptions } from '../../helpers/fc-options.js';

/**
 * The line reader and the answer frame together, over whatever a console might send around one
 * answer, cut into reads anywhere: the answer is exactly the command's own lines, whatever log
 * lines (from any thread, with or without the `Executing command` echo) and telnet bytes come
 * between them; nothing after the end marker's reply is taken; arbitrary bytes never make either
 * throw, and an answer never grows past the cap.
 */

const REPLY = "*** ERROR: unknown command 'porter-end-0123456789abcdef0123456789abcdef'";

type Piece =
  | { readonly kind: 'answer'; readonly text: string }
  | { readonly kind: 'junk'; readonly bytes: Uint8Array }
  | { readonly kind: 'log'; readonly text: string }
  | { readonly kind: 'telnet'; readonly bytes: Uint8Array };

/** Text of an answer line: anything but line ends, NUL and the start of a log line's shape. */
const answerText = fc
  .string({ unit: 'grapheme', maxLength: 80 })
  .map((s) => s.replace(/[\r\n\0]/g, ' '))
  .filter((s) => !/^\d{4}-/.test(s) && s !== REPLY);
const logText = fc
  .tuple(fc.integer({ min: 0, max: 99_999 }), fc.constantFrom('INF', 'WRN', 'ERR', 'EXC'), fc.string({ maxLength: 60 }))
  .map(([uptime, level, text]) => `2024-08-03T09:22:30 ${uptime}.123 ${level} FOREIGN ${text.replace(/[\r\n\0]/g, ' ')}`);
/** Bytes that are not ASCII, no NUL, no IAC: a line of invalid UTF-8, which is still the command's output. */
const junk = fc.uint8Array({ min: 0x80, max: 0xfe, minLength: 1, maxLength: 40 });
const telnetBytes = fc.oneof(
  fc.constant(Uint8Array.of(0)),
  fc.tuple(fc.integer({ min: 251, max: 254 }), fc.integer({ min: 0, max: 255 })).map(([verb, option]) => Uint8Array.of(255, verb, option)),
  fc.integer({ min: 241, max: 249 }).map((command) => Uint8Array.of(255, command)),
  fc.uint8Array({ min: 0, max: 254, maxLength: 10 }).map((payload) => Uint8Array.from([255, 250, ...payload, 255, 240])),
);

const piece: fc.Arbitrary<Piece> = fc.oneof(
  { weight: 4, arbitrary: answerText.map((text): Piece => ({ kind: 'answer', text })) },
  { weight: 1, arbitrary: junk.map((bytes): Piece => ({ kind: 'junk', bytes })) },
  { weight: 3, arbitrary: logText.map((text): Piece => ({ kind: 'log', text })) },
  { weight: 2, arbitrary: telnetBytes.map((bytes): Piece => ({ kind: 'telnet', bytes })) },
);

function encode(piece: Piece): Buffer {
  switch (piece.kind) {
    case 'answer':
    case 'log':
      return Buffer.from(`${piece.text}\r\n`, 'utf8');
    case 'junk':
      return Buffer.concat([Buffer.from(piece.bytes), Buffer.from('\r\n')]);
    case 'telnet':
      return Buffer.from(piece.bytes);
  }
}

function expectedLines(pieces: readonly Piece[]): string[] {
  return pieces.flatMap((p) => (p.kind === 'answer' ? [p.text] : p.kind === 'junk' ? [Buffer.from(p.bytes).toString('utf8')] : []));
}

function trimBlank(lines: string[]): string {
  let start = 0;
  let end = lines.length;
  while (start < end && lines[start]!.trim() === '') start += 1;
  while (end > start && lines[end - 1]!.trim() === '') end -= 1;
  return lines.slice(start, end).join('\n');
}

/** Splits a stream into reads at the given cut points. */
function chunked(stream: Buffer, cuts: readonly number[]): Buffer[] {
  const points = [...new Set(cuts.map((c) => c % (stream.length + 1)))].sort((a, b) => a - b);
  const chunks: Buffer[] = [];
  let start = 0;
  for (const point of points) {
    chunks.push(stream.subarray(start, point));
    start = point;
  }
  chunks.push(stream.subarray(start));
  return chunks;
}

function run(chunks: readonly Buffer[], maxBytes: number): { steps: FrameStep[]; frame: AnswerFrame; overflowed: boolean } {
  const reader = new TelnetLineReader(maxBytes);
  const frame = new AnswerFrame(REPLY, maxBytes);
  const steps: FrameStep[] = [];
  let overflowed = false;
  for (const chunk of chunks) {
    const batch = reader.push(chunk);
    for (const line of batch.lines) {
      if (steps.at(-1) === 'end' || steps.at(-1) === 'overflow') break;
      steps.push(frame.take(line));
    }
    overflowed ||= batch.overflow;
  }
  return { steps, frame, overflowed };
}

describe('telnet framing properties', () => {
  test('the answer is exactly the command lines before the marker reply, whatever comes between and after', () => {
    fc.assert(
      fc.property(
        fc.array(piece, { maxLength: 30 }),
        fc.array(piece, { maxLength: 10 }),
        fc.array(fc.nat(), { maxLength: 20 }),
        (before, after, cuts) => {
          const stream = Buffer.concat([...before.map(encode), Buffer.from(`${REPLY}\r\n`), ...after.map(encode)]);
          const { steps, frame } = run(chunked(stream, cuts), 1024 * 1024);
          assert.equal(steps.at(-1), 'end');
          assert.equal(steps.filter((s) => s === 'end').length, 1);
          assert.equal(frame.text(), trimBlank(expectedLines(before)));
          assert.ok(!frame.text().includes('FOREIGN'), 'a log line was taken for the answer');
        },
      ),
      fcOptions({ numRuns: 300 }),
    );
  });

  test('arbitrary bytes in arbitrary reads never throw, and an answer never passes the cap', () => {
    fc.assert(
      fc.property(fc.array(fc.uint8Array({ maxLength: 300 }), { maxLength: 20 }), fc.integer({ min: 1, max: 500 }), (reads, cap) => {
        const { frame, steps } = run(
          reads.map((r) => Buffer.from(r)),
          cap,
        );
        assert.ok(Buffer.byteLength(frame.text(), 'utf8') <= cap);
        assert.ok(steps.every((s) => s === 'more' || s === 'end' || s === 'overflow'));
      }),
      fcOptions({ numRuns: 300 }),
    );
  });
});
