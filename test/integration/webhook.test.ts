import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { connect, createServer, type AddressInfo, type Server } from 'node:net';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { eventBody, post, sendEvent, signedHeaders } from '../peers/webhook-sender.js';
import { waitFor } from '../helpers/wait-for.js';
import { startRconServer, type FakeRconServer } from '../../src/sim/faults/rcon-server.js';
import { gate, RCON_PASSWORD, SIM_SERVER_ID, SIM_TOKEN, startBed, WAIT, type PorterProcess, type TestBed } from './harness.js';

/**
 * Webhook wake-ups through the real CLI (docs/design.md#webhook-wake-ups): a sender that signs
 * like the store's webhook service (test/peers/webhook-sender.ts, on the `standardwebhooks`
 * package), the simulated Seller API counting every pull. The buyer's data in every event is
 * distinctive, and is looked for in porter's output and state directory afterwards.
 */

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const FORGED = 'whsec_dGhlIG9sZCBzZWNyZXQgb2YgdGhlIHN0b3Jl';
const BUYER = { email: 'zelda.quokka.7731@example.org', name: 'Zelda Quokkasdottir', accountIdentifier: 'Steve' };

function configure(bed: TestBed, idleMs: number, extra: (config: Record<string, unknown>) => void = () => undefined): void {
  writeFileSync(join(bed.dir, 'webhook-secret'), `${SECRET}\n`, { mode: 0o600 });
  bed.writeConfig((config) => {
    config.poll.idleMs = idleMs;
    config.api.webhookSecretFile = './webhook-secret';
    Object.assign(config, { webhook: { listen: '127.0.0.1:0', maxBodyBytes: 8192 } });
    extra(config as unknown as Record<string, unknown>);
  });
}

async function started(porter: PorterProcess): Promise<string> {
  const ready = await porter.waitForEvent('webhook.listening');
  await porter.waitForEvent('porter.started');
  return `http://127.0.0.1:${String(ready.port)}/webhook`;
}

/**
 * A bed whose API knows a second store, `late`, with its own token and server, and a game server
 * for it; `addLateStore` writes the config a reload adds it with (its webhook secret in a file).
 */
async function lateStoreBed(): Promise<{
  bed: TestBed;
  lateGame: FakeRconServer;
  addLateStore: (config: Record<string, unknown>) => void;
}> {
  const SCOPES = ['commands:execute', 'servers:read'];
  const bed = await startBed({
    api: { tokens: { [SIM_TOKEN]: SCOPES, [LATE_TOKEN]: SCOPES }, servers: [SIM_SERVER_ID, LATE_SERVER_ID] },
  });
  const lateGame = await startRconServer({ password: RCON_PASSWORD, flavour: 'minecraft', players: ['Steve'] });
  writeFileSync(join(bed.dir, 'late-webhook-secret'), `${SECRET}\n`, { mode: 0o600 });
  const addLateStore = (config: Record<string, unknown>) => {
    const servers = config.servers as Array<Record<string, unknown>>;
    const home = servers[0]!;
    servers.push({
      ...home,
      id: LATE_SERVER_ID,
      name: 'late-1',
      store: 'late',
      executor: { ...(home.executor as object), port: lateGame.port },
    });
    config.stores = { late: { baseUrl: bed.api.url, token: LATE_TOKEN, webhookSecretFile: './late-webhook-secret' } };
  };
  return { bed, lateGame, addLateStore };
}

const LATE_SERVER_ID = '7f1c2b9e-5d44-4c1a-9b0e-3a8d6e2f4c10';
const LATE_TOKEN = 'gci_late_store_R4t5y6u7i8';

const pulls = (bed: TestBed) => bed.api.requests.filter((r) => r.route === 'pull');

/** The buyer's data is nowhere porter writes: not its output, not a file of its state directory. */
function assertNoBuyerData(bed: TestBed, porter: PorterProcess): void {
  const files = (dir: string): string[] =>
    readdirSync(dir).flatMap((entry) => {
      const path = join(dir, entry);
      return statSync(path).isDirectory() ? files(path) : [path];
    });
  const places = [
    { where: 'stdout/stderr', text: porter.output },
    ...files(join(bed.dir, 'state')).map((path) => ({ where: path, text: readFileSync(path, 'latin1') })),
  ];
  for (const { where, text } of places) {
    for (const value of [BUYER.email, BUYER.name]) assert.ok(!text.includes(value), `${value} found in ${where}`);
  }
}

describe('webhook wake-ups through the real CLI', () => {
  test('with poll.idleMs 15000, a purchase announced by a signed event is delivered long before the next idle poll', async (t) => {
    const bed = await startBed();
    try {
      configure(bed, 15_000);
      const porter = bed.spawnPorter();
      const url = await started(porter);
      await waitFor(() => pulls(bed).length >= 1, { ...WAIT, what: 'the first (empty) pull' });
      const before = pulls(bed).length;
      bed.api.enqueue(SIM_SERVER_ID, { command: 'say paid-by-webhook' });
      const sentAt = Date.now();
      const answers = await sendEvent(url, { secret: SECRET, buyer: BUYER });
      assert.deepEqual(
        answers.map((a) => a.status),
        [204],
      );
      await waitFor(() => bed.ranCount('say paid-by-webhook') === 1, { ...WAIT, what: 'the delivery' });
      const latency = Date.now() - sentAt;
      assert.ok(latency < 7_500, `delivered ${latency} ms after the event: that is the idle poll's doing, not the wake-up's`);
      // The wake-up's pull claimed it: no idle poll came between.
      assert.ok(pulls(bed).length - before <= 2, `${pulls(bed).length - before} pulls for one event`);
      t.diagnostic(`event → executed on the game server: ${latency} ms (idle poll every 15 s)`);
      porter.kill('SIGTERM');
      assert.deepEqual(await porter.waitExit(), { code: 0, signal: null }, porter.tail());
      assertNoBuyerData(bed, porter);
    } finally {
      await bed.close();
    }
  });

  test('forged, replayed, stale, oversized and slow events are refused or ignored and wake nothing', async () => {
    const bed = await startBed();
    try {
      // Debug logs too: not even they carry the buyer's data.
      configure(bed, 30_000, (config) => Object.assign(config.log as object, { level: 'debug' }));
      const porter = bed.spawnPorter();
      const url = await started(porter);
      await waitFor(() => pulls(bed).length >= 1, { ...WAIT, what: 'the first pull' });
      // A valid event first, so its ids are known; then everything that must not wake.
      const body = eventBody({ eventId: 'evt_once', buyer: BUYER });
      const headers = signedHeaders(SECRET, body, 'msg_once');
      assert.equal((await post(url, body, headers)).status, 204);
      await waitFor(() => pulls(bed).length >= 2, { ...WAIT, what: 'the first pull and the woken one' });
      const quiet = pulls(bed).length;
      bed.api.enqueue(SIM_SERVER_ID, { command: 'say not-before-the-real-event' });

      const forged = eventBody({ buyer: BUYER });
      assert.equal((await post(url, forged, signedHeaders(FORGED, forged))).status, 401, 'forged');
      assert.equal((await post(url, forged, { 'content-type': 'application/json' })).status, 401, 'unsigned');
      assert.equal((await post(url, body, headers)).status, 204, 'the same webhook-id again: 2xx, as a retry must get');
      assert.equal((await post(url, body, signedHeaders(SECRET, body, 'msg_manual_retry'))).status, 204, 'same eventId, new webhook-id');
      const stale = eventBody({ buyer: BUYER });
      assert.equal((await post(url, stale, signedHeaders(SECRET, stale, undefined, Date.now() - 3_600_000))).status, 401, 'stale');
      const future = eventBody({ buyer: BUYER });
      assert.equal((await post(url, future, signedHeaders(SECRET, future, undefined, Date.now() + 3_600_000))).status, 401, 'future');
      const test = eventBody({ type: 'webhook.test', buyer: BUYER });
      assert.equal((await post(url, test, signedHeaders(SECRET, test))).status, 204, 'webhook.test');
      const big = eventBody({ buyer: { ...BUYER, note: 'x'.repeat(10_000) } });
      assert.equal((await post(url, big, signedHeaders(SECRET, big))).status, 413, 'oversized');
      const redirect = await fetch(url.replace('/webhook', '/'), { method: 'POST', redirect: 'manual', body: forged });
      assert.equal(redirect.status, 404, 'no redirects, ever');

      // Headers, then a body trickled a byte at a time: cut off at the 5 s body deadline.
      const slowStarted = Date.now();
      const slow = await new Promise<string>((resolve) => {
        const { port } = new URL(url);
        let sent = 0;
        let trickle: NodeJS.Timeout | undefined;
        const socket = connect(Number(port), '127.0.0.1', () => {
          const signed = signedHeaders(SECRET, body);
          const lines = Object.entries(signed).map(([name, value]) => `${name}: ${value}\r\n`);
          socket.write(`POST /webhook HTTP/1.1\r\nHost: x\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${lines.join('')}\r\n`);
          trickle = setInterval(() => socket.write(body.slice(sent, ++sent)), 200);
        });
        let text = '';
        socket.on('data', (data) => (text += data.toString()));
        socket.on('close', () => {
          clearInterval(trickle);
          resolve(text);
        });
        socket.on('error', () => undefined);
      });
      assert.match(slow, /^HTTP\/1\.1 408/);
      assert.ok(Date.now() - slowStarted < 9_000, 'cut off at the body deadline, within the store-side 10 s');

      // Seconds have passed: anything woken would have pulled (and claimed the command) by now.
      assert.equal(pulls(bed).length, quiet, 'a refused or repeated event made porter pull');
      assert.equal(bed.ranCount('say not-before-the-real-event'), 0);
      // The next real event does wake it.
      assert.equal((await sendEvent(url, { secret: SECRET, buyer: BUYER }))[0]?.status, 204);
      await waitFor(() => bed.ranCount('say not-before-the-real-event') === 1, { ...WAIT, what: 'the delivery after a real event' });

      porter.kill('SIGTERM');
      assert.deepEqual(await porter.waitExit(), { code: 0, signal: null }, porter.tail());
      assertNoBuyerData(bed, porter);
    } finally {
      await bed.close();
    }
  });

  test('a burst of 500 forged and valid events cannot raise the pull rate above the budget', async (t) => {
    const budget = { perWindow: 10, windowMs: 5000 };
    const bed = await startBed({ api: { budget } });
    try {
      configure(bed, 30_000, (config) => Object.assign(config.api as object, { budget }));
      const porter = bed.spawnPorter();
      const url = await started(porter);
      await waitFor(() => pulls(bed).length >= 1, { ...WAIT, what: 'the first pull' });
      const burstStarted = Date.now();
      const statuses: number[] = [];
      for (let batch = 0; batch < 25; batch++) {
        const sends = Array.from({ length: 20 }, (_, i) => {
          const body = eventBody({ buyer: BUYER });
          const headers = signedHeaders(i % 2 === 0 ? SECRET : FORGED, body);
          return post(url, body, headers).then((answer) => statuses.push(answer.status));
        });
        await Promise.all(sends);
      }
      const burstMs = Date.now() - burstStarted;
      assert.equal(statuses.filter((s) => s === 204).length, 250);
      assert.equal(statuses.filter((s) => s === 401).length, 250);
      // Let porter spend whatever the wake-ups could make it spend, a full window past the burst.
      const until = Date.now() + budget.windowMs + 1000;
      await waitFor(() => Date.now() > until, { ...WAIT, intervalMs: 100, what: 'a window after the burst' });
      porter.kill('SIGTERM');
      assert.deepEqual(await porter.waitExit(), { code: 0, signal: null }, porter.tail());

      const times = pulls(bed).map((r) => r.at);
      let most = 0;
      for (const start of times) most = Math.max(most, times.filter((at) => at >= start && at < start + budget.windowMs).length);
      assert.ok(most <= budget.perWindow, `${most} pulls in one ${budget.windowMs} ms window`);
      assert.equal(bed.api.requests.filter((r) => r.status === 429).length, 0);
      assert.ok(times.length > 2, 'the valid events did wake porter');
      t.diagnostic(`500 events in ${burstMs} ms → ${times.length} pulls in total, at most ${most} in any ${budget.windowMs} ms window`);
      assertNoBuyerData(bed, porter);
    } finally {
      await bed.close();
    }
  });

  test('porter check binds the webhook address and reads the secret, one line each', async () => {
    const bed = await startBed();
    try {
      configure(bed, 1000);
      const check = bed.spawnPorter({ args: ['check', '-c', bed.configPath] });
      const exit = await check.waitExit();
      assert.equal(exit.code, 0, check.tail());
      assert.match(check.stdout, /^✔ webhook secret read \(a whsec_ key of 24 bytes\)$/m);
      assert.match(check.stdout, /^✔ webhook listener: 127\.0\.0\.1:0 can be bound/m);
      assert.ok(!check.output.includes(SECRET));

      const blocker = await new Promise<Server>((resolve) => {
        const server = createServer();
        server.listen(0, '127.0.0.1', () => resolve(server));
      });
      const port = (blocker.address() as AddressInfo).port;
      configure(bed, 1000, (config) => Object.assign(config, { webhook: { listen: `127.0.0.1:${port}` } }));
      const busy = bed.spawnPorter({ args: ['check', '-c', bed.configPath] });
      assert.equal((await busy.waitExit()).code, 1, busy.tail());
      assert.match(busy.stdout, /^✖ webhook\.listen 127\.0\.0\.1:\d+: cannot listen \(EADDRINUSE\)/m);
      blocker.close();
    } finally {
      await bed.close();
    }
  });

  test('a store a reload adds takes its signed events while its game server still logs in, and its purchase is delivered once it has', async (t) => {
    const { bed, lateGame, addLateStore } = await lateStoreBed();
    const loading = gate();
    try {
      // An idle poll every 15 s: a delivery within seconds of the login is the wake's (or the first pull's), never the idle pace.
      configure(bed, 15_000);
      const porter = bed.spawnPorter();
      const url = `${await started(porter)}/late`;
      assert.equal((await sendEvent(url, { secret: SECRET }))[0]?.status, 404, 'no store "late" before the reload');

      lateGame.holdLogins(loading.promise);
      configure(bed, 15_000, addLateStore);
      porter.kill('SIGHUP');
      await waitFor(() => lateGame.loginsSeen >= 1, { ...WAIT, what: "the added server's login, held" });
      bed.api.enqueue(LATE_SERVER_ID, { command: 'say paid-while-loading' });
      const answers = await sendEvent(url, { secret: SECRET, buyer: BUYER });
      assert.deepEqual(
        answers.map((a) => a.status),
        [204],
        'a signed event for a store the reload configures is accepted while its server logs in',
      );
      assert.equal(porter.events('reload.done').length, 0, 'the login was still held when the event came');

      const releasedAt = Date.now();
      loading.open();
      await porter.waitForEvent('reload.done');
      await waitFor(() => lateGame.executed.some((e) => e.command === 'say paid-while-loading'), { ...WAIT, what: 'the delivery' });
      const latency = Date.now() - releasedAt;
      assert.ok(latency < 7_500, `delivered ${latency} ms after the login: that is the idle poll's doing, not the wake-up's`);
      t.diagnostic(`login released → executed on the game server: ${latency} ms (idle poll every 15 s)`);
      porter.kill('SIGTERM');
      assert.deepEqual(await porter.waitExit(), { code: 0, signal: null }, porter.tail());
      assertNoBuyerData(bed, porter);
    } finally {
      loading.open();
      await lateGame.close();
      await bed.close();
    }
  });

  test("a SIGHUP during start-up's logins that adds a store: its signed events are accepted at once, before any login ends", async () => {
    const { bed, lateGame, addLateStore } = await lateStoreBed();
    const starting = gate();
    try {
      configure(bed, 15_000);
      // The first server's login is held: porter is still starting when the owner reloads.
      bed.rcon.holdLogins(starting.promise);
      const porter = bed.spawnPorter();
      const ready = await porter.waitForEvent('webhook.listening');
      const url = `http://127.0.0.1:${String(ready.port)}/webhook/late`;
      await waitFor(() => bed.rcon.loginsSeen >= 1, { ...WAIT, what: 'the start-up login, held' });
      assert.equal((await sendEvent(url, { secret: SECRET }))[0]?.status, 404, 'no store "late" before the reload');

      configure(bed, 15_000, addLateStore);
      porter.kill('SIGHUP');
      // Before the fix the reload, and with it the listener's new store, waited for the held login.
      await waitFor(async () => (await sendEvent(url, { secret: SECRET }))[0]?.status === 204, {
        ...WAIT,
        intervalMs: 200,
        what: 'a signed event for the store the SIGHUP added to be accepted while start-up still logs in',
      });
      assert.equal(porter.events('porter.started').length, 0, 'the start-up login was still held');

      bed.api.enqueue(LATE_SERVER_ID, { command: 'say paid-during-start' });
      starting.open();
      await porter.waitForEvent('reload.done');
      await waitFor(() => lateGame.executed.some((e) => e.command === 'say paid-during-start'), { ...WAIT, what: 'the delivery' });
      porter.kill('SIGTERM');
      assert.deepEqual(await porter.waitExit(), { code: 0, signal: null }, porter.tail());
    } finally {
      starting.open();
      await lateGame.close();
      await bed.close();
    }
  });

  test("a named store's webhook: porter check reads its secret and the store of api needs none", async () => {
    const bed = await startBed();
    try {
      writeFileSync(join(bed.dir, 'eu-webhook-secret'), `${SECRET}\n`, { mode: 0o600 });
      bed.writeConfig((config) => {
        Object.assign(config, {
          stores: { eu: { baseUrl: bed.api.url, token: config.api.token, webhookSecretFile: './eu-webhook-secret' } },
          webhook: { listen: '127.0.0.1:0' },
        });
      });
      const check = bed.spawnPorter({ args: ['check', '-c', bed.configPath] });
      assert.equal((await check.waitExit()).code, 0, check.tail());
      assert.match(check.stdout, /^✔ webhook secret of store "eu" read \(a whsec_ key of 24 bytes\): POST \/webhook\/eu$/m);
      assert.doesNotMatch(check.stdout, /webhook secret: not set/);
      assert.ok(!check.output.includes(SECRET));
    } finally {
      await bed.close();
    }
  });
});
