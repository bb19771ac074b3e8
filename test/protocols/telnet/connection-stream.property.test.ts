import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import fc from 'fast-check';
import { pino } from 'pino';
import { OutcomeUnknownError } from '../../../src/errors.js';
import { TelnetConnection } from '../../../src/protocols/telnet/connection.js';
import { fcOptions } from '../../helpers/fc-options.js';

/**
 * Over a real socket, cut into writes anywhere: whatever a console sends around an answer (log
 * lines of any level, telnet negotiation, NULs, lines of invalid UTF-8) a command gets exactly its
 * own answer when its end marker's reply comes, OutcomeUnknownError when the connection drops or
 * goes silent first, and nothing else; after an answered command the next one on the same
 * connection gets exactly its own answer too. Seeded (see fcOptions): PORTER_FC_SEED replays.
 */

const silent = pino({ level: 'silent' });
/** A silent server costs this much per run; a timeout is an allowed outcome, so a slow machine cannot fail it. */
const TIMEOUT_MS = 150;

type Piece =
  | { readonly kind: 'answer'; readonly text: string }
  | { readonly kind: 'log'; readonly text: string }
  | { readonly kind: 'bytes'; readonly bytes: Uint8Array };

type Ending = 'answer' | 'close' | 'silence';

interface Script {
  readonly pieces: readonly Piece[];
  readonly ending: Ending;
  readonly cuts: readonly number[];
}

const answerText = fc
  .string({ maxLength: 60 })
  .map((s) => s.replace(/[\r\n\0]/g, ' ').trim())
  .filter((s) => s !== '' && !/^\d{4}-/.test(s));
const piece: fc.Arbitrary<Piece> = fc.oneof(
  { weight: 4, arbitrary: answerText.map((text): Piece => ({ kind: 'answer', text })) },
  {
    weight: 3,
    arbitrary: fc
      .constantFrom('INF', 'WRN', 'ERR', 'EXC')
      .map((level): Piece => ({ kind: 'log', text: `2024-08-03T09:22:30 26471.969 ${level} FOREIGN line` })),
  },
  {
    weight: 2,
    arbitrary: fc
      .constantFrom(Uint8Array.of(0), Uint8Array.of(255, 253, 1), Uint8Array.of(255, 250, 24, 1, 255, 240), Uint8Array.of(255, 241))
      .map((bytes): Piece => ({ kind: 'bytes', bytes })),
  },
);
const script: fc.Arbitrary<Script> = fc.record({
  pieces: fc.array(piece, { maxLength: 12 }),
  ending: fc.oneof(
    { weight: 6, arbitrary: fc.constant<Ending>('answer') },
    { weight: 2, arbitrary: fc.constant<Ending>('close') },
    {
      weight: 1,
      arbitrary: fc.constant<Ending>('silence'),
    },
  ),
  cuts: fc.array(fc.nat(), { maxLength: 8 }),
});

function encode(p: Piece): Buffer {
  return p.kind === 'bytes' ? Buffer.from(p.bytes) : Buffer.from(`${p.text}\r\n`, 'utf8');
}

/** Writes `stream` in pieces cut at `cuts`, each its own write on the socket. */
function writeCut(socket: Socket, stream: Buffer, cuts: readonly number[]): void {
  const points = [...new Set(cuts.map((c) => c % (stream.length + 1)))].sort((a, b) => a - b);
  let start = 0;
  for (const point of [...points, stream.length]) {
    if (point > start) socket.write(stream.subarray(start, point));
    start = point;
  }
}

describe('telnet connection over a scripted console', () => {
  let server: Server;
  let port: number;
  /** The script for the first command of the next connection. */
  let current: Script = { pieces: [], ending: 'answer', cuts: [] };

  before(async () => {
    server = createServer((socket) => {
      socket.on('error', () => socket.destroy());
      const scriptForThis = current;
      let commands = 0;
      let pendingCommand: string | undefined;
      let buffer = '';
      socket.write(Buffer.concat([Buffer.from([0, 0]), Buffer.from('*** Connected with 7DTD server.\r\n')]));
      socket.on('data', (chunk: Buffer) => {
        buffer += chunk.toString('utf8');
        for (let end = buffer.indexOf('\r\n'); end !== -1; end = buffer.indexOf('\r\n')) {
          const line = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const reply = Buffer.from(`*** ERROR: unknown command '${line}'\r\n`);
          if (!line.startsWith('porter-end-')) {
            pendingCommand = line;
            continue;
          }
          if (pendingCommand === undefined) {
            socket.write(reply);
            continue;
          }
          commands += 1;
          const command = pendingCommand;
          pendingCommand = undefined;
          if (commands > 1) {
            socket.write(Buffer.concat([Buffer.from(`second answer to ${command}\r\n`), reply]));
            continue;
          }
          const body = Buffer.concat(scriptForThis.pieces.map(encode));
          if (scriptForThis.ending === 'answer') writeCut(socket, Buffer.concat([body, reply]), scriptForThis.cuts);
          else {
            writeCut(socket, body, scriptForThis.cuts);
            if (scriptForThis.ending === 'close') socket.end();
          }
        }
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  test('a command gets its own answer or OutcomeUnknownError, never log lines, never another answer', async () => {
    await fc.assert(
      fc.asyncProperty(script, async (s) => {
        current = s;
        const connection = new TelnetConnection({ host: '127.0.0.1', port, password: 'unused', connectTimeoutMs: 2000, logger: silent });
        try {
          await connection.open();
          const expected = s.pieces.flatMap((p) => (p.kind === 'answer' ? [p.text] : [])).join('\n');
          let answer: string;
          try {
            answer = await connection.request('give Alice casinoCoin 1', TIMEOUT_MS);
          } catch (error) {
            assert.ok(error instanceof OutcomeUnknownError, `unexpected error: ${String(error)}`);
            assert.notEqual(s.ending, 'answer', `an answered command failed: ${(error as Error).message}`);
            return;
          }
          assert.equal(s.ending, 'answer', 'a command whose marker reply never came was taken as answered');
          assert.equal(answer, expected);
          assert.equal(await connection.request('say next', 2000), 'second answer to say next');
        } finally {
          connection.destroy();
        }
      }),
      fcOptions({ numRuns: 60 }),
    );
  });
});
