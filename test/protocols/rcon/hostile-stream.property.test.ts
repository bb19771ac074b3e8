import { NotSentError, OutcomeUnknownError } from '../../../src/errors.js';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import fc from 'fast-check';
import { bodyText, encodePacket, PacketDecoder, PacketType } from '../../../src/protocols/rcon/codec.js';
import { RconConnection } from '../../../src/protocols/rcon/connection.js';
import { MINECRAFT_PROBE_TYPE } from '../../../src/protocols/rcon/exchange.js';
import { PASSWORD, silent } from './helpers/setup.js';
import { fcOptions } from '../../helpers/fc-options.js';

/**
 * Over a real socket: whatever a game server sends around an answer (packets for
 * other ids and of any type, invalid UTF-8, bytes that are not RCON, absurd lengths, an early
 * close), a command gets its own answer or fails as not sent / unknown: never an exception of
 * another kind, never text that belongs to another request, and the next command on the same
 * connection gets exactly its own answer. Seeded (see fcOptions): PORTER_FC_SEED replays a
 * failure.
 */

/**
 * Bytes that break the framing can swallow the answer, so some runs end in a timeout: short, to
 * keep the suite fast. A timeout is an allowed outcome (unknown), so a slow machine cannot fail it.
 */
const REQUEST_TIMEOUT_MS = 250;
/** In every packet meant for someone else, never in one for the command. */
const FOREIGN = 'FOREIGN';

type Piece =
  | { readonly kind: 'foreign'; readonly id: number; readonly type: number; readonly body: Uint8Array }
  | { readonly kind: 'ours'; readonly body: Uint8Array }
  | { readonly kind: 'raw'; readonly bytes: Uint8Array }
  | { readonly kind: 'length'; readonly length: number };

type Ending = 'answer' | 'answer-then-noise' | 'close';

interface Script {
  readonly pieces: readonly Piece[];
  readonly ending: Ending;
}

/** Ids porter never uses for the first two commands of a connection (it counts up from 1). */
const foreignId = fc.oneof(fc.integer({ min: 1000, max: 2 ** 31 - 1 }), fc.integer({ min: -(2 ** 31), max: -1 }));
/** Bytes without any ASCII letter, so "FOREIGN" cannot appear in them by chance. */
const noLetters = fc.uint8Array({ min: 0x80, max: 0xff, maxLength: 600 });

const piece: fc.Arbitrary<Piece> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('foreign' as const),
      id: foreignId,
      type: fc.integer({ min: -5, max: 300 }),
      body: fc.uint8Array({ maxLength: 200 }),
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('ours' as const), body: noLetters }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('raw' as const), bytes: fc.uint8Array({ minLength: 1, maxLength: 40 }) }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('length' as const),
      length: fc.oneof(fc.constant(0x7fffffff), fc.constant(-1), fc.integer({ min: -(2 ** 31), max: 9 })),
    }),
  },
);

const script: fc.Arbitrary<Script> = fc.record({
  pieces: fc.array(piece, { maxLength: 6 }),
  ending: fc.constantFrom<Ending>('answer', 'answer-then-noise', 'close'),
});

function foreignPacket(id: number, type: number, body: Uint8Array): Buffer {
  return encodePacket(id, type, Buffer.concat([Buffer.from(FOREIGN), Buffer.from(body)]));
}

/** A server that logs in anyone with the password and answers commands as the current script says. */
class ScriptedServer {
  readonly #server: Server;
  readonly #sockets = new Set<Socket>();
  current: Script = { pieces: [], ending: 'answer' };

  constructor() {
    this.#server = createServer((socket) => this.#accept(socket));
  }

  async listen(): Promise<number> {
    await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', resolve));
    return (this.#server.address() as AddressInfo).port;
  }

  async close(): Promise<void> {
    for (const socket of this.#sockets) socket.destroy();
    await new Promise((resolve) => this.#server.close(resolve));
  }

  #accept(socket: Socket): void {
    this.#sockets.add(socket);
    socket.on('close', () => this.#sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    const decoder = new PacketDecoder();
    let commands = 0;
    socket.on('data', (chunk: Buffer) => {
      for (const packet of decoder.push(chunk).packets) {
        const write = (bytes: Buffer) => {
          if (!socket.destroyed) socket.write(bytes);
        };
        if (packet.type === PacketType.AUTH) {
          write(encodePacket(bodyText(packet.body) === PASSWORD ? packet.id : -1, PacketType.AUTH_RESPONSE, ''));
        } else if (packet.type === PacketType.EXECCOMMAND) {
          commands += 1;
          // The first command gets the hostile script, every later one a plain answer.
          const { pieces, ending } = commands === 1 ? this.current : { pieces: [], ending: 'answer' as const };
          for (const p of pieces) {
            if (p.kind === 'foreign') write(foreignPacket(p.id, p.type, p.body));
            else if (p.kind === 'ours') write(encodePacket(packet.id, PacketType.RESPONSE_VALUE, Buffer.from(p.body)));
            else if (p.kind === 'raw') write(Buffer.from(p.bytes));
            else write(Buffer.from(new Int32Array([p.length]).buffer));
          }
          if (ending === 'close') {
            socket.destroy();
            return;
          }
          write(encodePacket(packet.id, PacketType.RESPONSE_VALUE, `ANSWER-${bodyText(packet.body)}`));
          if (ending === 'answer-then-noise') write(foreignPacket(packet.id + 1000, PacketType.RESPONSE_VALUE, new Uint8Array()));
        } else if (packet.type === MINECRAFT_PROBE_TYPE) {
          write(encodePacket(packet.id, PacketType.RESPONSE_VALUE, 'Unknown request c8'));
        } else if (packet.type === PacketType.RESPONSE_VALUE) {
          // srcds: the probe mirrored, then its extra packet.
          write(encodePacket(packet.id, PacketType.RESPONSE_VALUE, ''));
          write(encodePacket(packet.id, PacketType.RESPONSE_VALUE, Buffer.from([0, 1, 0, 0])));
        }
      }
    });
  }
}

/** A request's outcome, or the assertion that it was one porter allows. */
async function outcome(request: Promise<string>): Promise<string | undefined> {
  try {
    return await request;
  } catch (error) {
    assert.ok(error instanceof OutcomeUnknownError || error instanceof NotSentError, `unexpected ${String(error)}`);
    return undefined;
  }
}

describe('RconConnection against a server sending anything around its answers', () => {
  const server = new ScriptedServer();
  let port: number;
  before(async () => {
    port = await server.listen();
  });
  after(() => server.close());

  test("never an unexpected error, never another request's text, and the next answer is exactly its own", async () => {
    await fc.assert(
      fc.asyncProperty(script, fc.constantFrom('minecraft' as const, 'source' as const), async (current, flavour) => {
        server.current = current;
        const connection = new RconConnection({
          host: '127.0.0.1',
          port,
          password: PASSWORD,
          flavour,
          connectTimeoutMs: 5000,
          logger: silent,
        });
        await connection.open();
        try {
          const first = await outcome(connection.request('first', REQUEST_TIMEOUT_MS));
          if (first !== undefined)
            assert.ok(!first.includes(FOREIGN), `the first answer holds another request's text: ${JSON.stringify(first.slice(0, 80))}`);
          const second = await outcome(connection.request('second', REQUEST_TIMEOUT_MS));
          if (second !== undefined) assert.equal(second, 'ANSWER-second');
        } finally {
          connection.destroy();
        }
      }),
      fcOptions({ numRuns: 100 }),
    );
  });
});
