import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { systemClock, type Clock } from '../../src/clock.js';
import { CredentialsError, NotSentError, PorterError } from '../../src/errors.js';
import { ReconnectingLink } from '../../src/net/reconnecting-link.js';
import { FakeClock, flush } from '../helpers/fake-clock.js';
import { waitFor } from '../helpers/wait-for.js';

class TestConnectError extends PorterError {
  override readonly code = 'E_TEST_CONNECT';
}

/** A connection the test ends by hand. */
class FakeConn {
  open = true;
  dropped = false;
  released = false;
  #onEnd: ((reason: string) => void) | undefined;

  watch(listener: (reason: string) => void): void {
    this.#onEnd = listener;
  }

  end(reason: string): void {
    this.open = false;
    this.#onEnd?.(reason);
  }
}

interface PendingOpen {
  readonly signal: AbortSignal;
  succeed(): FakeConn;
  fail(error: Error): void;
}

/** A transport whose every open() waits for the test to decide it. */
function fakeTransport() {
  const opens: PendingOpen[] = [];
  const transport = {
    open(signal: AbortSignal): Promise<FakeConn> {
      return new Promise<FakeConn>((resolve, reject) => {
        // Like the real transports: an aborted attempt gives up (close() waits for it).
        signal.addEventListener('abort', () => reject(new TestConnectError('connecting was cancelled')), { once: true });
        opens.push({
          signal,
          succeed: () => {
            const conn = new FakeConn();
            resolve(conn);
            return conn;
          },
          fail: reject,
        });
      });
    },
    isOpen: (conn: FakeConn) => conn.open,
    watch: (conn: FakeConn, ended: (reason: string) => void) => conn.watch(ended),
    drop: (conn: FakeConn) => {
      conn.dropped = true;
      conn.open = false;
    },
    release: (conn: FakeConn) => {
      conn.released = true;
      conn.open = false;
    },
  };
  return { transport, opens };
}

const POLICY = { initialMs: 1_000, maxMs: 8_000 };

/** A link over a fake transport; its log lines, down to debug, are kept in `lines`. */
function makeLink<C extends Clock = FakeClock>(clock: C = new FakeClock() as unknown as C, backoff = POLICY) {
  const { transport, opens } = fakeTransport();
  const lines: Record<string, unknown>[] = [];
  const logger = pino({ level: 'debug' }, { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) });
  const link = new ReconnectingLink<FakeConn>({
    transport,
    wording: {
      subject: 'the test session to 127.0.0.1:1',
      ConnectError: TestConnectError,
      connected: 'TEST connected',
      reconnected: 'TEST reconnected',
      lost: 'TEST connection lost; reconnecting',
      retrying: 'TEST reconnect failed; retrying with backoff',
      refused: 'TEST password rejected; not reconnecting until the configuration is fixed',
      fields: { test: '127.0.0.1:1' },
    },
    backoff,
    logger,
    clock,
    // No jitter: every backoff is exactly half its ceiling.
    random: () => 0,
  });
  return { link, opens, clock, lines };
}

/** Opens the link once and returns the connection. */
async function connected(link: ReconnectingLink<FakeConn>, opens: PendingOpen[]): Promise<FakeConn> {
  const ready = link.connect();
  await waitFor(() => opens.length === 1, { what: 'the first open' });
  const conn = opens[0]!.succeed();
  await ready;
  return conn;
}

/** A link whose first connection ended after `livedMs`. */
async function droppedAfter(livedMs: number) {
  const made = makeLink();
  const conn = await connected(made.link, made.opens);
  made.clock.advance(livedMs);
  conn.end('gone');
  return made;
}

describe('ReconnectingLink', () => {
  test('concurrent connect() calls share one attempt', async () => {
    const { link, opens } = makeLink();
    const first = link.connect();
    const second = link.connect();
    await waitFor(() => opens.length === 1, { what: 'the open' });
    assert.equal(link.isReady(), false);
    const conn = opens[0]!.succeed();
    await Promise.all([first, second]);
    assert.equal(opens.length, 1, 'one open for both callers');
    assert.equal(link.isReady(), true);
    assert.equal(link.connection, conn);
    assert.equal(link.reconnects, 0);
    await link.close();
  });

  test('connect() rejects with the transport error and does not retry by itself', async () => {
    const { link, opens, clock } = makeLink();
    const attempt = link.connect();
    await waitFor(() => opens.length === 1, { what: 'the open' });
    opens[0]!.fail(new TestConnectError('refused'));
    await assert.rejects(attempt, { message: 'refused' });
    clock.advance(60_000);
    await flush();
    assert.equal(opens.length, 1);
    assert.equal(clock.sleeping, 0);
    await link.close();
  });

  test('after a stable connection ends, the first reconnect is immediate and waitReady resolves on it', async () => {
    const { link, opens, clock, lines } = await droppedAfter(5_000);
    assert.equal(link.isReady(), false);
    const lost = lines.filter((line) => line.event === 'connection.lost');
    assert.deepEqual(
      lost.map((line) => [line.level, line.reason]),
      [[40, 'gone']],
    );
    // The transport's wording is what an operator reads: the link writes it as the message.
    assert.equal(lost[0]!.msg, 'TEST connection lost; reconnecting');
    assert.equal(link.connection, undefined);
    const ready = link.waitReady();
    await waitFor(() => opens.length === 2, { what: 'the reconnect' });
    assert.equal(clock.sleeping, 0, 'no backoff before the first reconnect');
    const second = opens[1]!.succeed();
    await ready;
    assert.equal(link.connection, second);
    assert.equal(link.reconnects, 1);
    await link.close();
  });

  test('a connection that dies within 5 s counts as a failed attempt: the reconnect waits for the backoff', async () => {
    const { link, opens, clock } = await droppedAfter(4_999);
    await waitFor(() => clock.sleeping === 1, { what: 'the backoff sleep' });
    assert.equal(opens.length, 1);
    clock.advance(POLICY.initialMs / 2 - 1);
    await flush();
    assert.equal(opens.length, 1, 'not before half the first ceiling');
    clock.advance(1);
    await waitFor(() => opens.length === 2, { what: 'the reconnect after the backoff' });
    await link.close();
  });

  test('failed reconnects back off exponentially and log at warn on attempts 1, 2, 4, 8 only', async () => {
    const { link, opens, clock, lines } = await droppedAfter(10_000);
    const ready = link.waitReady();
    const delays: number[] = [];
    for (let attempt = 1; attempt <= 8; attempt += 1) {
      await waitFor(() => opens.length === attempt + 1, { what: `open ${attempt + 1}` });
      opens[attempt]!.fail(new TestConnectError(`refused ${attempt}`));
      await waitFor(() => clock.sleeping === 1, { what: `backoff ${attempt}` });
      let waited = 0;
      while (opens.length === attempt + 1) {
        clock.advance(250);
        waited += 250;
        await flush();
      }
      delays.push(waited);
    }
    assert.deepEqual(delays, [500, 1_000, 2_000, 4_000, 4_000, 4_000, 4_000, 4_000], 'half of 1 s doubling, capped at 8 s');
    const failed = lines.filter((line) => line.event === 'connection.retrying');
    assert.deepEqual(
      failed.map((line) => [line.attempt, line.level]),
      [
        [1, 40],
        [2, 40],
        [3, 20],
        [4, 40],
        [5, 20],
        [6, 20],
        [7, 20],
        [8, 40],
      ],
    );
    assert.equal(failed[0]!.test, '127.0.0.1:1', 'the wording fields go on every line');
    assert.equal(typeof failed[0]!.err, 'string', 'the failed attempt says why, as err like every error message');
    opens[9]!.succeed();
    await ready;
    assert.ok(lines.some((line) => line.event === 'connection.reconnected' && line.reconnects === 1));
    await link.close();
  });

  test('a CredentialsError is fatal: waiters reject with it and reconnecting stops for good', async () => {
    const { link, opens, clock, lines } = await droppedAfter(10_000);
    const ready = link.waitReady();
    await waitFor(() => opens.length === 2, { what: 'the reconnect' });
    const refused = new CredentialsError('password rejected: fix the configuration');
    opens[1]!.fail(refused);
    await assert.rejects(ready, (error) => error === refused);
    clock.advance(600_000);
    await flush();
    assert.equal(opens.length, 2, 'no attempt after the refusal');
    assert.equal(clock.sleeping, 0);
    assert.equal(link.isReady(), false);
    await assert.rejects(link.connect(), (error) => error === refused);
    await assert.rejects(link.waitReady(), (error) => error === refused);
    assert.throws(
      () => link.throwIfUnusable(),
      (error) => error === refused,
    );
    link.ensureReconnecting();
    assert.equal(opens.length, 2);
    assert.ok(lines.some((line) => line.event === 'connection.refused' && line.level === 50));
    await link.close();
  });

  test('waitReady() rejects with the signal reason when aborted; the others keep waiting', async () => {
    const { link, opens } = makeLink();
    const controller = new AbortController();
    const aborted = link.waitReady(controller.signal);
    const kept = link.waitReady();
    await waitFor(() => opens.length === 1, { what: 'the open' });
    controller.abort(new Error('stop waiting'));
    await assert.rejects(aborted, { message: 'stop waiting' });
    opens[0]!.succeed();
    await kept;
    await link.close();
  });

  test('close() settles waiters, aborts the attempt, releases the connection and leaves no sleep behind', async () => {
    const { link, clock } = await droppedAfter(1_000);
    await waitFor(() => clock.sleeping === 1, { what: 'the backoff sleep' });
    const ready = link.waitReady();
    await link.close();
    assert.equal(clock.sleeping, 0);
    await assert.rejects(
      ready,
      (error) => error instanceof TestConnectError && error.message === 'the test session to 127.0.0.1:1 was closed before it was ready',
    );
    await assert.rejects(
      link.connect(),
      (error) => error instanceof NotSentError && error.message === 'the test session to 127.0.0.1:1 is closed; the command was not sent',
    );
    assert.equal(link.closed, true);
    await link.close();

    const other = makeLink();
    const live = await connected(other.link, other.opens);
    await other.link.close();
    assert.equal(live.released, true);
    assert.equal(other.link.connection, undefined);
  });

  test('a connection that opens after close() is dropped, and the attempt rejects', async () => {
    const { link, opens } = makeLink();
    const attempt = link.connect();
    await waitFor(() => opens.length === 1, { what: 'the open' });
    // The open resolves, but close() runs before the link hears of it.
    const late = opens[0]!.succeed();
    const closing = link.close();
    assert.equal(opens[0]!.signal.aborted, true, 'the attempt is told to stop');
    await assert.rejects(
      attempt,
      (error) => error instanceof TestConnectError && error.message === 'the test session to 127.0.0.1:1 was closed',
    );
    await closing;
    assert.equal(late.dropped, true);
    assert.equal(link.isReady(), false);
  });

  test('close() on the system clock leaves no timer while the backoff was sleeping', async () => {
    const timers = () => process.getActiveResourcesInfo().filter((kind) => kind === 'Timeout').length;
    const before = timers();
    // A real timer far in the future: only close() can end it.
    const { link, opens } = makeLink(systemClock, { initialMs: 600_000, maxMs: 600_000 });
    const attempt = link.connect();
    await waitFor(() => opens.length === 1, { what: 'the open' });
    opens[0]!.fail(new TestConnectError('refused'));
    await assert.rejects(attempt);
    const ready = link.waitReady();
    await waitFor(() => opens.length === 2, { what: 'the first retry' });
    opens[1]!.fail(new TestConnectError('refused'));
    await waitFor(() => timers() === before + 1, { what: 'the backoff timer' });
    await link.close();
    await assert.rejects(ready);
    assert.equal(timers(), before);
  });
});
