import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { pino, type Logger } from 'pino';
import { NotSentError, PorterError } from '../../src/errors.js';
import { executorLink, LinkedExecutor } from '../../src/protocols/linked-executor.js';
import type { ReconnectingLink } from '../../src/net/reconnecting-link.js';
import { FakeClock } from '../helpers/fake-clock.js';

class FakeConnectError extends PorterError {
  override readonly code = 'E_FAKE_CONNECT';
}

interface FakeConnection {
  open: boolean;
  readonly number: number;
}

const WORDS = { notConnected: 'not connected; the command was not sent', cancelledWaiting: 'cancelled while waiting; it was not sent' };

/** The smallest executor on a link: a connection is a flag, a request returns the connection's number. */
class FakeExecutor extends LinkedExecutor<FakeConnection, undefined> {
  protected readonly link: ReconnectingLink<FakeConnection>;
  protected readonly logger: Logger;
  protected readonly over = 'a fake link';
  opened = 0;
  released = 0;
  readonly sent: string[] = [];

  constructor(logger: Logger = pino({ level: 'silent' })) {
    super(undefined);
    this.logger = logger;
    this.link = executorLink<FakeConnection>(
      {
        open: () => Promise.resolve({ open: true, number: ++this.opened }),
        isOpen: (connection) => connection.open,
        watch: () => undefined,
        drop: (connection) => (connection.open = false),
        release: (connection) => void (connection.open = false),
      },
      {
        subject: 'the fake session',
        ConnectError: FakeConnectError,
        connected: 'connected',
        reconnected: 'reconnected',
        lost: 'lost',
        retrying: 'retrying',
        refused: 'refused',
      },
      { deps: { logger }, logger, clock: new FakeClock() },
    );
  }

  protected sendCommand(command: string, signal?: AbortSignal): Promise<string> {
    return this.inTurn(WORDS, signal, async (connection) => {
      this.sent.push(command);
      return `ran on ${connection.number}`;
    });
  }

  request<T>(signal: AbortSignal | undefined, send: (connection: FakeConnection) => Promise<T>): Promise<T> {
    return this.inTurn(WORDS, signal, send);
  }

  protected override closed(): Promise<void> {
    this.released += 1;
    return Promise.resolve();
  }
}

describe('LinkedExecutor (what the executors on a reconnecting link share)', () => {
  test('a delivery command: one command.sending line with its id, never its text, then the transport sends it', async () => {
    const lines: Array<Record<string, unknown>> = [];
    const executor = new FakeExecutor(
      pino({ level: 'debug' }, { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) }),
    );
    try {
      await executor.connect();
      lines.length = 0;
      assert.equal(await executor.execute('give Steve diamond 1', { id: '9007199254740993', serverId: 's1' }), 'ran on 1');
      assert.deepEqual(executor.sent, ['give Steve diamond 1']);
      assert.deepEqual(
        lines.map(({ event, id, msg }) => ({ event, id, msg })),
        [{ event: 'command.sending', id: '9007199254740993', msg: 'sending command over a fake link' }],
      );
      assert.ok(!JSON.stringify(lines).includes('diamond'), 'the command text stays out of the debug line');
    } finally {
      await executor.close();
    }
  });

  test('a request before the link is open is not sent, in the executor words', async () => {
    const executor = new FakeExecutor();
    try {
      await assert.rejects(
        executor.request(undefined, () => assert.fail('sent without a connection')),
        (e: unknown) => e instanceof NotSentError && e.message === WORDS.notConnected,
      );
    } finally {
      await executor.close();
    }
  });

  test('requests take turns on the open connection; one cancelled while waiting is not sent and carries the reason', async () => {
    const executor = new FakeExecutor();
    try {
      await executor.connect();
      assert.equal(executor.isReady(), true);
      let release = () => {};
      const first = executor.request(
        undefined,
        (connection) => new Promise<number>((resolve) => (release = () => resolve(connection.number))),
      );
      const waiting = new AbortController();
      let secondRan = false;
      const second = executor.request(waiting.signal, () => {
        secondRan = true;
        return Promise.resolve(0);
      });
      waiting.abort(new Error('the loop is stopping'));
      const error = await second.then(
        () => assert.fail('a cancelled request ran'),
        (e: unknown) => e,
      );
      assert.ok(error instanceof NotSentError);
      assert.equal(error.message, WORDS.cancelledWaiting);
      assert.equal(((error as Error).cause as Error).message, 'the loop is stopping');
      release();
      assert.equal(await first, 1);
      assert.equal(secondRan, false);
    } finally {
      await executor.close();
    }
  });

  test("close releases what the executor holds once, and a started request's own error is its outcome", async () => {
    const executor = new FakeExecutor();
    await executor.connect();
    await assert.rejects(
      executor.request(undefined, () => Promise.reject(new Error('the answer never came'))),
      /the answer never came/,
    );
    await executor.close();
    await executor.close();
    assert.equal(executor.released, 1);
    assert.equal(executor.isReady(), false);
  });
});
