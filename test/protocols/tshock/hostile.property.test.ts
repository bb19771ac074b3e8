import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server, type Socket } from 'node:net';
import fc from 'fast-check';
import { pino } from 'pino';
import { CommandFailedError, CredentialsError, OutcomeUnknownError } from '../../../src/errors.js';
import { AnswerTooLargeError } from '../../../src/protocols/answer-limit.js';
import { TShockExecutor } from '../../../src/protocols/tshock/executor.js';
import { readReply } from '../../../src/protocols/tshock/reply.js';
import { fcOptions } from '../../helpers/fc-options.js';

/**
 * The tshock executor against a server that answers anything: any HTTP status, any body, any
 * bytes that are not HTTP at all, in any chunks. Whatever comes back, the executor only ever
 * resolves with an answer TShock wrote (a JSON status "200" under an HTTP 2xx, with a `response`)
 * or rejects with one of the documented errors, and no error text ever carries the token, in any
 * spelling, even when the server echoes it.
 */

const TOKEN = 'hostile-T0ken%2B+/=&-7c1e';
const SPELLINGS = [TOKEN, encodeURIComponent(TOKEN), encodeURIComponent(encodeURIComponent(TOKEN))];
const context = { id: '7', serverId: '1b4e28ba-2fa1-11d2-883f-0016d3cca427' };

/** What the server does with the next rawcmd: bytes written in these chunks, then the connection ended. */
interface Script {
  readonly chunks: readonly Buffer[];
}

const TOKEN_TEST_ANSWER = httpAnswer(200, JSON.stringify({ status: '200', response: 'Token is valid and was passed through correctly.' }));

function httpAnswer(status: number, body: string, contentType = 'application/json; charset=utf-8'): Buffer {
  const bytes = Buffer.from(body, 'utf8');
  return Buffer.concat([
    Buffer.from(`HTTP/1.1 ${status} X\r\nContent-Type: ${contentType}\r\nContent-Length: ${bytes.length}\r\nConnection: close\r\n\r\n`),
    bytes,
  ]);
}

/** A raw TCP server: `/tokentest` is answered like TShock, every other request by the current script. */
class HostileServer {
  script: Script = { chunks: [] };
  port = 0;
  readonly #server: Server;
  readonly #sockets = new Set<Socket>();

  constructor() {
    this.#server = createServer((socket) => {
      this.#sockets.add(socket);
      socket.on('close', () => this.#sockets.delete(socket));
      socket.on('error', () => socket.destroy());
      let head = '';
      socket.on('data', (chunk: Buffer) => {
        if (head.includes('\r\n\r\n')) return;
        head += chunk.toString('latin1');
        if (!head.includes('\r\n\r\n')) return;
        if (head.startsWith('GET /tokentest?')) {
          socket.end(TOKEN_TEST_ANSWER);
          return;
        }
        void this.#play(socket, this.script);
      });
    });
  }

  async start(): Promise<void> {
    await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', resolve));
    this.port = (this.#server.address() as { port: number }).port;
  }

  async #play(socket: Socket, script: Script): Promise<void> {
    for (const chunk of script.chunks) {
      if (socket.destroyed) return;
      await new Promise<void>((resolve) => socket.write(chunk, () => resolve()));
    }
    socket.end();
  }

  async close(): Promise<void> {
    for (const socket of this.#sockets) socket.destroy();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}

/** Splits bytes at the given fractions: the same answer in other chunkings. */
function chunked(bytes: Buffer, cuts: readonly number[]): Buffer[] {
  const points = [...new Set(cuts.map((cut) => Math.floor(cut * bytes.length)))].sort((a, b) => a - b);
  const chunks: Buffer[] = [];
  let start = 0;
  for (const point of points) {
    if (point > start && point < bytes.length) {
      chunks.push(bytes.subarray(start, point));
      start = point;
    }
  }
  chunks.push(bytes.subarray(start));
  return chunks;
}

const anyStatusText = fc.oneof(
  fc.constantFrom('200', '400', '401', '403', '404', '500', '503', ' 200 ', '2OO'),
  fc.string({ maxLength: 4 }),
  fc.integer({ min: 0, max: 999 }),
  fc.constant(null),
);
const echoed = fc.constantFrom(...SPELLINGS.map((spelling) => `token ${spelling} echoed`));
const anyText = fc.oneof(fc.string({ maxLength: 40 }), echoed);
const anyResponse = fc.oneof(
  fc.array(fc.oneof(anyText, fc.integer(), fc.constant(null)), { maxLength: 4 }),
  anyText,
  fc.constant(undefined),
  fc.dictionary(fc.string({ maxLength: 5 }), anyText, { maxKeys: 2 }),
);
const tshockLikeBody = fc
  .record({ status: anyStatusText, response: anyResponse, error: fc.option(anyText), errormsg: fc.option(anyText) })
  .map((object) => JSON.stringify(object));
const anyBody = fc.oneof(
  tshockLikeBody,
  tshockLikeBody.map((body) => body.slice(0, Math.floor(body.length / 2))),
  fc.string({ maxLength: 80 }),
  echoed,
  fc.constantFrom('', 'null', '[]', '"200"', '<html>502 Bad Gateway</html>'),
);
const httpStatus = fc.oneof(
  fc.constantFrom(200, 201, 204, 301, 400, 401, 403, 404, 414, 500, 502, 503),
  fc.integer({ min: 200, max: 599 }),
);
const cuts = fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 4 });

const answerScript = fc.record({ status: httpStatus, body: anyBody, cuts }).map(({ status, body, cuts: at }) => ({
  script: { chunks: chunked(httpAnswer(status, body), at) },
  status,
  body,
}));
const rawScript = fc
  .record({ bytes: fc.uint8Array({ maxLength: 200 }).map((bytes) => Buffer.from(bytes)), cuts })
  .map(({ bytes, cuts: at }) => ({ script: { chunks: chunked(bytes, at) }, status: undefined, body: undefined }));

describe('tshock executor against a hostile HTTP server', () => {
  const server = new HostileServer();
  let tshock: TShockExecutor;
  before(async () => {
    await server.start();
    tshock = new TShockExecutor(
      { type: 'tshock', host: '127.0.0.1', port: server.port, password: TOKEN, timeoutMs: 30_000, connectTimeoutMs: 15_000 },
      { logger: pino({ level: 'silent' }), backoff: { initialMs: 1, maxMs: 5 } },
    );
    await tshock.connect();
  });
  after(async () => {
    await tshock.close();
    await server.close();
  });

  test('any status, any body, any bytes, any chunking: only an answer TShock wrote is done; the rest is a documented error without the token', async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof({ arbitrary: answerScript, weight: 4 }, { arbitrary: rawScript, weight: 1 }), async (run) => {
        server.script = run.script;
        await tshock.waitReady(AbortSignal.timeout(10_000));
        let answer: string | undefined;
        try {
          answer = await tshock.execute('/give Zenith Bob', context);
        } catch (error) {
          assert.ok(
            error instanceof OutcomeUnknownError || error instanceof CommandFailedError || error instanceof CredentialsError,
            `undocumented error: ${String(error)}`,
          );
          for (const spelling of SPELLINGS) assert.ok(!error.message.includes(spelling), `the token leaked: ${error.message}`);
          return;
        }
        // Done only on TShock's own "200" under an HTTP 2xx.
        assert.notEqual(run.status, undefined, `raw bytes were taken for an answer: ${JSON.stringify(answer)}`);
        const reply = readReply(run.status!, run.body!);
        assert.equal(reply.kind, 'ok', `resolved on ${run.status} ${run.body}`);
      }),
      fcOptions({ numRuns: 150 }),
    );
  });

  test('TShock refusing a request before running it (400, 404) fails the command with its text', async () => {
    for (const [status, error] of [
      ['400', 'Missing or empty cmd parameter'],
      ['404', "Specified API endpoint doesn't exist. Refer to the documentation for a list of valid endpoints."],
    ] as const) {
      server.script = { chunks: [httpAnswer(Number(status), JSON.stringify({ status, error }))] };
      await tshock.waitReady(AbortSignal.timeout(10_000));
      const failure = await tshock.execute('/give Zenith Bob', context).then(
        () => assert.fail('expected a rejection'),
        (e: unknown) => e as Error,
      );
      assert.ok(failure instanceof CommandFailedError, String(failure));
      assert.match(failure.message, new RegExp(`refused the command before running it \\(status ${status}: ${error.slice(0, 20)}`));
    }
  });

  test('a proxy in front answering HTTP 401 or 403 with a page of its own is a refused credential', async () => {
    server.script = { chunks: [httpAnswer(401, '<html>401 Authorization Required</html>', 'text/html')] };
    await tshock.waitReady(AbortSignal.timeout(10_000));
    await assert.rejects(tshock.execute('/give Zenith Bob', context), CredentialsError);
  });

  test('a body over the cap is not read to its end: outcome unknown', async () => {
    const line = 'x'.repeat(1024 * 1024);
    const body = JSON.stringify({ status: '200', response: Array.from({ length: 9 }, () => line) });
    server.script = { chunks: [httpAnswer(200, body)] };
    await tshock.waitReady(AbortSignal.timeout(10_000));
    await assert.rejects(tshock.execute('/give Zenith Bob', context), AnswerTooLargeError);
  });
});
