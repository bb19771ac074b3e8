import { connect, type Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { systemClock } from '../../src/clock.js';
import { webhookKey } from '../../src/config/webhook-secret.js';
import type { WebhookOutcome } from '../../src/webhook/outcome.js';
import { startWebhookServer, type WebhookServer } from '../../src/webhook/server.js';
import { eventBody, post, signedHeaders } from '../fakes/webhook-sender.js';
import { waitFor } from '../helpers/wait-for.js';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const SHOP_SECRET = 'shop-secret-raw-text';

describe('the webhook listener', () => {
  let server: WebhookServer;
  let url: string;
  const woken: (string | undefined)[] = [];
  const outcomes: WebhookOutcome[] = [];

  before(async () => {
    server = await startWebhookServer({
      listen: '127.0.0.1:0',
      toleranceS: 300,
      maxBodyBytes: 4096,
      scheme: 'standard',
      secretsFor: (store) => (store === undefined ? [webhookKey(SECRET)] : store === 'shop' ? [webhookKey(SHOP_SECRET)] : undefined),
      wake: (store) => woken.push(store),
      onOutcome: (outcome) => outcomes.push(outcome),
      logger: pino({ level: 'silent' }),
      clock: systemClock,
      limits: { bodyDeadlineMs: 300 },
    });
    url = `http://127.0.0.1:${server.port}`;
  });
  after(async () => server.close());

  const signedPost = (path: string, body: string, secret = SECRET, webhookId?: string) =>
    post(`${url}${path}`, body, signedHeaders(secret, body, webhookId));

  test('a signed payment event is answered 2xx and wakes its store; a named store has its own secret', async () => {
    woken.length = 0;
    assert.equal((await signedPost('/webhook', eventBody({}))).status, 204);
    assert.equal((await signedPost('/webhook/shop', eventBody({}), SHOP_SECRET)).status, 204);
    assert.equal((await signedPost('/webhook/shop', eventBody({}), SECRET)).status, 401);
    assert.deepEqual(woken, [undefined, 'shop']);
  });

  test('webhook.test and unknown types: 2xx, nothing woken; an unreadable signed body likewise', async () => {
    woken.length = 0;
    assert.equal((await signedPost('/webhook', eventBody({ type: 'webhook.test' }))).status, 204);
    assert.equal((await signedPost('/webhook', eventBody({ type: 'order.refunded' }))).status, 204);
    assert.equal((await signedPost('/webhook', 'not json')).status, 204);
    assert.deepEqual(woken, []);
    assert.deepEqual(outcomes.slice(-3), ['ignored_type', 'ignored_type', 'unreadable']);
  });

  test('a retry with the same webhook-id, or the same eventId under a new webhook-id, wakes nothing more', async () => {
    woken.length = 0;
    const body = eventBody({ eventId: 'evt_retry' });
    assert.equal((await signedPost('/webhook', body, SECRET, 'msg_retry')).status, 204);
    assert.equal((await signedPost('/webhook', body, SECRET, 'msg_retry')).status, 204);
    assert.equal((await signedPost('/webhook', body, SECRET, 'msg_manual_retry')).status, 204);
    assert.deepEqual(woken, [undefined]);
    assert.deepEqual(outcomes.slice(-3), ['woken', 'replayed', 'replayed']);
  });

  test('forged, unsigned and stale events: 401, nothing woken', async () => {
    woken.length = 0;
    const body = eventBody({});
    assert.equal((await signedPost('/webhook', body, 'whsec_dGhlIG9sZCBzZWNyZXQgb2YgdGhlIHN0b3Jl')).status, 401);
    assert.equal((await post(`${url}/webhook`, body, { 'content-type': 'application/json' })).status, 401);
    const stale = signedHeaders(SECRET, body, undefined, Date.now() - 600_000);
    assert.equal((await post(`${url}/webhook`, body, stale)).status, 401);
    assert.deepEqual(woken, []);
    assert.deepEqual(outcomes.slice(-3), ['refused_signature', 'refused_signature', 'refused_timestamp']);
  });

  test('other paths 404, other methods 405, unknown stores 404, too large 413', async () => {
    const body = eventBody({});
    assert.equal((await signedPost('/', body)).status, 404);
    assert.equal((await signedPost('/webhook/', body)).status, 404);
    assert.equal((await signedPost('/webhook/nope', body)).status, 404);
    const get = await fetch(`${url}/webhook`, { redirect: 'manual' });
    assert.equal(get.status, 405);
    assert.equal(get.headers.get('allow'), 'POST');
    const big = eventBody({ buyer: { name: 'x'.repeat(5000) } });
    assert.equal((await signedPost('/webhook', big)).status, 413);
  });

  test('a chunked body that grows past the bound is cut off with 413', async () => {
    const answer = await new Promise<string>((resolve) => {
      const socket = connect(server.port, '127.0.0.1', () => {
        socket.write('POST /webhook HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n');
        const chunk = 'a'.repeat(1000);
        for (let i = 0; i < 6; i++) socket.write(`${chunk.length.toString(16)}\r\n${chunk}\r\n`);
      });
      let text = '';
      socket.on('data', (data) => (text += data.toString()));
      socket.on('close', () => resolve(text));
      socket.on('error', () => undefined);
    });
    assert.match(answer, /^HTTP\/1\.1 413/);
  });

  test('a client that sends its headers and trickles the body is cut off at the body deadline', async () => {
    const started = Date.now();
    const answer = await new Promise<string>((resolve) => {
      let trickle: NodeJS.Timeout | undefined;
      // The body starts once the headers are written: a byte before them would be a malformed request, not a slow one.
      const socket = connect(server.port, '127.0.0.1', () => {
        socket.write('POST /webhook HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{');
        trickle = setInterval(() => socket.write(' '), 50);
      });
      let text = '';
      socket.on('data', (data) => (text += data.toString()));
      socket.on('close', () => {
        clearInterval(trickle);
        resolve(text);
      });
      socket.on('error', () => undefined);
    });
    assert.match(answer, /^HTTP\/1\.1 408/);
    assert.ok(Date.now() - started < 5000);
    await waitFor(() => outcomes.includes('refused_timeout'), { what: 'the timeout counted' });
  });
});

describe('the webhook listener under many connections', () => {
  test('connections past maxConnections are closed at once; the ones held open do not stop a later event', async () => {
    let woken = 0;
    let closed = 0;
    const server = await startWebhookServer({
      listen: '127.0.0.1:0',
      toleranceS: 300,
      maxBodyBytes: 4096,
      scheme: 'standard',
      secretsFor: () => [webhookKey(SECRET)],
      wake: () => woken++,
      logger: pino({ level: 'silent' }),
      clock: systemClock,
      limits: { maxConnections: 2, requestTimeoutMs: 1000, headersTimeoutMs: 500 },
    });
    const sockets = await Promise.all(
      [0, 1].map(
        () =>
          new Promise<Socket>((resolve) => {
            const socket = connect(server.port, '127.0.0.1', () => resolve(socket));
            socket.on('error', () => undefined);
            socket.resume().on('close', () => closed++);
          }),
      ),
    );
    try {
      // The kernel's accept queue is first in, first out: the two held connections are counted before the third.
      const third = await new Promise<string>((resolve) => {
        const socket = connect(server.port, '127.0.0.1', () =>
          socket.write('POST /webhook HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n'),
        );
        let text = '';
        socket.on('data', (data) => (text += data.toString()));
        socket.on('close', () => resolve(text));
        socket.on('error', () => undefined);
      });
      assert.equal(third, '', 'the third connection was served');
      // The held connections sent nothing: they are cut off, and the listener serves again.
      await waitFor(() => closed === 2, { what: 'idle connections cut off' });
      const body = eventBody({});
      assert.equal((await post(`http://127.0.0.1:${server.port}/webhook`, body, signedHeaders(SECRET, body))).status, 204);
      assert.equal(woken, 1);
    } finally {
      for (const socket of sockets) socket.destroy();
      await server.close();
    }
  });
});
