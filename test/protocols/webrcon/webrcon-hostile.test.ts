import { OutcomeUnknownError } from '../../../src/errors.js';
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import fc from 'fast-check';
import { AnswerTooLargeError, MAX_ANSWER_BYTES, MAX_WEBSOCKET_MESSAGE_BYTES } from '../../../src/protocols/answer-limit.js';
import { WebRconExecutor } from '../../../src/protocols/webrcon/executor.js';
import { parseFrame } from '../../../src/protocols/webrcon/protocol.js';
import { FakeWebRconServer } from '../../peers/webrcon-server.js';
import { fcOptions } from '../../helpers/fc-options.js';

/**
 * Over WebRCON: an answer that floods, a message too large to hold, and
 * frames of any shape must never crash porter, grow it without bound, or mix answers.
 */

const PASSWORD = 'S3cret-rcon_pw';
const context = { id: '42', serverId: '1b4e28ba-2fa1-11d2-883f-0016d3cca427' };

async function withServer(body: (server: FakeWebRconServer, rcon: WebRconExecutor) => Promise<void>): Promise<void> {
  const server = await FakeWebRconServer.start({ password: PASSWORD, noise: false });
  const rcon = new WebRconExecutor(
    { type: 'webrcon', host: '127.0.0.1', port: server.port, password: PASSWORD, timeoutMs: 120_000, connectTimeoutMs: 30_000 },
    { logger: pino({ level: 'silent' }), backoff: { initialMs: 20, maxMs: 100 } },
  );
  try {
    await body(server, rcon);
  } finally {
    await rcon.close();
    await server.close();
  }
}

describe('WebRCON against a hostile server', () => {
  test('an answer flooding past the cap fails as AnswerTooLargeError; the connection is replaced and the next command delivered', () =>
    withServer(async (server, rcon) => {
      await rcon.connect();
      const started = Date.now();
      await assert.rejects(rcon.execute('flood', context), (error: unknown) => {
        assert.ok(error instanceof AnswerTooLargeError, String(error));
        assert.ok(error instanceof OutcomeUnknownError);
        assert.match(error.message, /Rust WebRCON at ws:\/\/127\.0\.0\.1:\d+\/<password>/);
        assert.match(error.message, /over porter's cap of 4 MiB/);
        assert.doesNotMatch(error.message, new RegExp(PASSWORD));
        return true;
      });
      assert.ok(Date.now() - started < 60_000, 'failed by the cap, not by the 120 s timeout');
      assert.ok(server.floodedBytes > MAX_ANSWER_BYTES);
      await rcon.waitReady(AbortSignal.timeout(10_000));
      assert.equal(await rcon.execute('echo next', context), 'next');
      assert.equal(server.acceptedConnections, 2);
      assert.equal(server.received.filter((r) => r.Message === 'flood').length, 1, 'never resent');
    }));

  test('a single message over the WebSocket cap drops the connection unread; the command is unknown, the next one delivered', () =>
    withServer(async (server, rcon) => {
      await rcon.connect();
      await assert.rejects(rcon.execute(`huge ${MAX_WEBSOCKET_MESSAGE_BYTES + 1}`, context), OutcomeUnknownError);
      await rcon.waitReady(AbortSignal.timeout(10_000));
      assert.equal(await rcon.execute('echo next', context), 'next');
      assert.equal(server.acceptedConnections, 2);
    }));

  test('an answer just under the cap is delivered whole', () =>
    withServer(async (_server, rcon) => {
      await rcon.connect();
      const size = MAX_ANSWER_BYTES - 1024;
      assert.equal((await rcon.execute(`huge ${size}`, context)).length, size);
    }));

  test('frames of any shape around a command are ignored; the command gets its own answer', () =>
    withServer(async (server, rcon) => {
      await rcon.connect();
      const pending = rcon.execute('slow 300', context);
      // The command went out with Identifier 1: none of these may answer it.
      for (const frame of [
        'not json at all',
        '[1, 2, 3]',
        'null',
        '{"Identifier": "1", "Message": "string id"}',
        '{"Identifier": 1.5, "Message": "fractional id"}',
        '{"Identifier": 1e300, "Message": "huge id"}',
        '{"Identifier": -0, "Message": "minus zero"}',
        '{"Identifier": 99, "Message": {"nested": true}}',
        '{"Message": "no id"}',
        `{"Identifier": 7, "Message": "${'\\u0000'.repeat(100)}"}`,
      ]) {
        server.sendRaw(frame);
      }
      server.sendRaw(Buffer.from([0xff, 0x00, 0x01]), { binary: true });
      assert.equal(await pending, 'slept 300');
      assert.equal(await rcon.execute('echo still in step', context), 'still in step');
    }));

  test('invalid UTF-8 in a text frame resets the connection cleanly', () =>
    withServer(async (server, rcon) => {
      await rcon.connect();
      const pending = rcon.execute('slow 300', context);
      server.sendRaw(Buffer.from([0x7b, 0xc3, 0x28, 0xff, 0x7d]));
      await assert.rejects(pending, OutcomeUnknownError);
      await rcon.waitReady(AbortSignal.timeout(10_000));
      assert.equal(await rcon.execute('echo next', context), 'next');
    }));
});

describe('parseFrame, property-based', () => {
  test('any text is a frame with an integer Identifier and a string Message, or undefined; it never throws', () => {
    const anyText = fc.oneof(
      fc.string({ unit: 'binary' }),
      fc.json(),
      fc.jsonValue().map((value) => JSON.stringify(value)),
    );
    const frameLike = fc
      .record(
        { Identifier: fc.oneof(fc.integer(), fc.double(), fc.string(), fc.constant(null)), Message: fc.jsonValue(), Type: fc.jsonValue() },
        { requiredKeys: [] },
      )
      .map((value) => JSON.stringify(value));
    fc.assert(
      fc.property(fc.oneof(anyText, frameLike), (text) => {
        const frame = parseFrame(text);
        if (frame === undefined) return;
        assert.ok(Number.isInteger(frame.identifier));
        assert.equal(typeof frame.message, 'string');
        assert.ok(frame.type === undefined || typeof frame.type === 'string');
      }),
      fcOptions({ numRuns: 500 }),
    );
  });
});
