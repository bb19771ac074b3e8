import { connect, type Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { systemClock } from '../../src/clock.js';
import { webhookKey } from '../../src/config/webhook-secret.js';
import type { WebhookOutcome } from '../../src/webhook/outcome.js';
import { startWebhookServer, type WebhookServer } from '../../src/webhook/server.js';
import { eventBody, post, signedHeaders } from '../peers/webhook-sender.js';
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
  async function listener(maxConnections?: number): Promise<{ server: WebhookServer; woken: () => number }> {
    let woken = 0;
    const server = await startWebhookServer({
      listen: '127.0.0.1:0',
      toleranceS: 300,
      maxBodyBytes: 4096,
      scheme: 'standard',
      secretsFor: () => [webhookKey(SECRET)],
      wake: () => woken++,
      logger: pino({ level: 'silent' }),
      clock: systemClock,
      ...(maxConnections === undefined ? {} : { limits: { maxConnections } }),
    });
    return { server, woken: () => woken };
  }

  /** A connection that the listener has accepted (it answered a request on it, or the test waits for it). */
  function open(port: number, first?: string): Promise<{ socket: Socket; closed: Promise<void>; read: () => string }> {
    return new Promise((resolve) => {
      let text = '';
      const socket = connect(port, '127.0.0.1', () => {
        if (first !== undefined) socket.write(first);
        resolve({ socket, closed, read: () => text });
      });
      const closed = new Promise<void>((done) => socket.on('close', () => done()));
      socket.on('data', (data) => (text += data.toString()));
      socket.on('error', () => undefined);
    });
  }

  const signedRequest = () => {
    const body = eventBody({});
    const headers = signedHeaders(SECRET, body);
    const lines = Object.entries({ ...headers, 'content-length': String(Buffer.byteLength(body)), host: 'porter' }).map(
      ([k, v]) => `${k}: ${v}`,
    );
    return `POST /webhook HTTP/1.1\r\n${lines.join('\r\n')}\r\n\r\n${body}`;
  };

  test('at the cap, the oldest connection that sent nothing is closed and the newcomer is served', async () => {
    const { server, woken } = await listener(2);
    const idle = await open(server.port);
    const newer = await open(server.port);
    try {
      const store = await open(server.port, signedRequest());
      await idle.closed;
      await waitFor(() => /^HTTP\/1\.1 204/.test(store.read()), { what: "the store's event answered" });
      assert.equal(woken(), 1);
      assert.equal(newer.socket.destroyed, false, 'the newer idle connection is kept');
      store.socket.destroy();
    } finally {
      newer.socket.destroy();
      await server.close();
    }
  });

  test('what sent the least goes first, never the newcomer: an idle connection, then one trickling its body, then an answered keep-alive', async () => {
    const { server, woken } = await listener(3);
    const connections: Array<Awaited<ReturnType<typeof open>>> = [];
    const add = async (first?: string) => {
      const connection = await open(server.port, first);
      connections.push(connection);
      return connection;
    };
    const answered204 = (connection: Awaited<ReturnType<typeof open>>) =>
      waitFor(() => /^HTTP\/1\.1 204/.test(connection.read()), { what: 'an event answered' });
    try {
      const keepAlive = await add(signedRequest());
      await answered204(keepAlive);
      const trickling = await add('POST /webhook HTTP/1.1\r\nHost: porter\r\nContent-Length: 100\r\n\r\n{"a":');
      const idle = await add();
      // Fourth: the idle one goes (it sent nothing), though the others are older.
      const fourth = await add(signedRequest());
      await idle.closed;
      await answered204(fourth);
      // Fifth: now the body still trickling is what sent the least; the newcomer stays.
      const fifth = await add(signedRequest());
      await trickling.closed;
      await answered204(fifth);
      // Sixth: only answered keep-alives are left: the oldest of them goes.
      const sixth = await add(signedRequest());
      await keepAlive.closed;
      await answered204(sixth);
      assert.equal(woken(), 4);
      assert.deepEqual(
        [fourth, fifth, sixth].map((c) => c.socket.destroyed),
        [false, false, false],
      );
    } finally {
      for (const connection of connections) connection.socket.destroy();
      await server.close();
    }
  });

  test('a flood of 200 idle connections and 50 slowloris requests from one address does not refuse a signed event (cap 128)', async () => {
    const { server, woken } = await listener();
    const flood: Socket[] = [];
    const trickles: NodeJS.Timeout[] = [];
    try {
      for (let i = 0; i < 250; i++) {
        const { socket } = await open(server.port);
        flood.push(socket);
        if (i >= 200) {
          socket.write('POST /webhook HTTP/1.1\r\nHost: porter\r\n');
          trickles.push(setInterval(() => socket.write('X'), 200));
        }
      }
      const body = eventBody({});
      const started = Date.now();
      const answer = await post(`http://127.0.0.1:${server.port}/webhook`, body, signedHeaders(SECRET, body));
      assert.equal(answer.status, 204, `the event was answered ${answer.status} ${answer.error ?? ''}`);
      // A fraction of the store's 10 s: the event is never queued behind the flood.
      assert.ok(Date.now() - started < 5_000, `answered after ${Date.now() - started} ms`);
      assert.equal(woken(), 1);
      assert.ok(flood.filter((socket) => !socket.destroyed).length <= 128, 'the cap holds');
    } finally {
      for (const timer of trickles) clearInterval(timer);
      for (const socket of flood) socket.destroy();
      await server.close();
    }
  });
});
