import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { systemClock } from '../../src/clock.js';
import { CredentialsError, NotSentError } from '../../src/errors.js';
import { PlayerCache } from '../../src/players/cache.js';
import { waitFor } from '../helpers/wait-for.js';
import { FakeClock } from '../helpers/fake-clock.js';

interface LogLine {
  level: number;
  event: string;
  err?: { message: string };
  [key: string]: unknown;
}

/** A real pino logger that writes its JSON lines into an array instead of stdout. */
function capturingLogger() {
  const lines: LogLine[] = [];
  const logger = pino({ level: 'debug' }, { write: (line: string) => void lines.push(JSON.parse(line) as LogLine) });
  /** The lines of one event (docs/operations.md#log-events) at one level. */
  const logged = (event: string, level: number) => lines.filter((line) => line.event === event && line.level === level);
  return { logger, lines, logged };
}

/** A read function whose answers the test hands out one by one. */
function controlledReads() {
  const pending: { resolve: (ids: string[]) => void; reject: (error: unknown) => void; signal?: AbortSignal }[] = [];
  let calls = 0;
  return {
    read: (signal?: AbortSignal) => {
      calls++;
      return new Promise<string[]>((resolve, reject) => {
        const entry = signal === undefined ? { resolve, reject } : { resolve, reject, signal };
        pending.push(entry);
        signal?.addEventListener('abort', () => reject(signal.reason), { once: true });
      });
    },
    get calls() {
      return calls;
    },
    next() {
      const entry = pending.shift();
      if (!entry) throw new Error('no read is waiting');
      return entry;
    },
  };
}

const silent = pino({ level: 'silent' });

describe('PlayerCache.get', () => {
  test('reads at most once per refreshMs and returns normalised identifiers', async () => {
    const clock = new FakeClock();
    let calls = 0;
    const cache = new PlayerCache({
      read: async () => {
        calls++;
        return [' Steve ', 'ALEX', 'steve', ''];
      },
      refreshMs: 2000,
      clock,
      logger: silent,
    });
    assert.deepEqual(await cache.get(), ['steve', 'alex']);
    clock.advance(1999);
    assert.deepEqual(await cache.get(), ['steve', 'alex']);
    assert.equal(calls, 1);
    clock.advance(1);
    await cache.get();
    assert.equal(calls, 2);
  });

  test('concurrent callers share one read', async () => {
    const clock = new FakeClock();
    const reads = controlledReads();
    const cache = new PlayerCache({ read: reads.read, refreshMs: 2000, clock, logger: silent });
    const results = Promise.all([cache.get(), cache.get(), cache.get()]);
    await waitFor(() => reads.calls === 1, { what: 'the shared read to start' });
    reads.next().resolve(['Notch']);
    assert.deepEqual(await results, [['notch'], ['notch'], ['notch']]);
    assert.equal(reads.calls, 1);
  });

  test('callers cannot change the cached list', async () => {
    const clock = new FakeClock();
    const cache = new PlayerCache({ read: async () => ['a'], refreshMs: 2000, clock, logger: silent });
    (await cache.get()).push('intruder');
    assert.deepEqual(await cache.get(), ['a']);
  });

  test('a failed read yields [], is logged at warn without failing the caller, and is retried soon', async () => {
    const clock = new FakeClock();
    const { logger, lines, logged } = capturingLogger();
    let fail = true;
    let calls = 0;
    const cache = new PlayerCache({
      read: async () => {
        calls++;
        if (fail) throw new Error('list command timed out after 5000 ms');
        return ['Steve'];
      },
      refreshMs: 30_000,
      clock,
      logger,
    });
    assert.deepEqual(await cache.get(), []);
    assert.deepEqual(
      lines.filter((line) => line.level >= 40).map((line) => line.event),
      ['players.unreadable'],
    );
    assert.equal(logged('players.unreadable', 40)[0]!.err?.message, 'list command timed out after 5000 ms');
    // Cached briefly, so a loop pulling right away does not hammer the game server…
    clock.advance(999);
    assert.deepEqual(await cache.get(), []);
    assert.equal(calls, 1);
    // …but not for refreshMs: the next try comes after a second.
    fail = false;
    clock.advance(1);
    assert.deepEqual(await cache.get(), ['steve']);
    assert.equal(calls, 2);
  });

  test('repeated failures warn at most once a minute', async () => {
    const clock = new FakeClock();
    const { logger, logged } = capturingLogger();
    const cache = new PlayerCache({
      read: async () => {
        throw new Error('connection reset');
      },
      refreshMs: 1000,
      clock,
      logger,
    });
    for (let i = 0; i < 30; i++) {
      await cache.get();
      clock.advance(1000);
    }
    assert.equal(logged('players.unreadable', 40).length, 1);
    assert.ok(logged('players.unreadable', 20).length >= 29);
    clock.advance(30_000);
    await cache.get();
    assert.equal(logged('players.unreadable', 40).length, 2);
    assert.equal(logged('players.unreadable', 40)[1]!.failures, 30);
  });

  test('NotSentError (game server unreachable) and credential errors are passed on, not turned into []', async () => {
    const clock = new FakeClock();
    for (const error of [new NotSentError('not connected'), new CredentialsError('RCON password rejected')]) {
      const cache = new PlayerCache({
        read: async () => {
          throw error;
        },
        refreshMs: 2000,
        clock,
        logger: silent,
      });
      await assert.rejects(cache.get(), error);
    }
  });

  test('a caller whose signal aborts leaves at once; others sharing the read still get an answer', async () => {
    const clock = new FakeClock();
    const reads = controlledReads();
    const cache = new PlayerCache({ read: reads.read, refreshMs: 2000, clock, logger: silent });
    const stop = new AbortController();
    const leaving = cache.get(stop.signal);
    const staying = cache.get();
    await waitFor(() => reads.calls === 1, { what: 'the shared read to start' });
    stop.abort(new Error('stopping'));
    await assert.rejects(leaving, /stopping/);
    // The read was started with the aborted signal and gave up; the other caller is not failed.
    assert.deepEqual(await staying, []);
    await assert.rejects(cache.get(stop.signal), /stopping/);
  });

  test('more than 4,096 players: the first 4,096 are kept and a warning says so', async () => {
    const clock = new FakeClock();
    const { logger, logged } = capturingLogger();
    const many = Array.from({ length: 4100 }, (_, i) => `p${i}`);
    const cache = new PlayerCache({ read: async () => many, refreshMs: 1000, clock, logger });
    assert.equal((await cache.get()).length, 4096);
    assert.deepEqual(
      logged('players.cut', 40).map((line) => line.cut),
      [4],
    );
  });
});

describe('PlayerCache joins', () => {
  test('onJoin fires with the new identifiers only, never for the first list or for leaves', async () => {
    const clock = new FakeClock();
    const lists: (string[] | Error)[] = [
      ['Steve'],
      ['Steve'],
      ['Steve', 'Alex'],
      ['Alex'],
      new Error('timeout'),
      ['Alex'],
      ['Alex', 'Steve', 'Notch'],
    ];
    const joins: string[][] = [];
    const cache = new PlayerCache({
      read: async () => {
        const next = lists.shift();
        if (next instanceof Error) throw next;
        return next ?? [];
      },
      refreshMs: 1000,
      clock,
      logger: silent,
      onJoin: (ids) => joins.push(ids),
    });
    for (let i = 0; i < 7; i++) {
      await cache.get();
      clock.advance(1000);
    }
    // A failed read between two lists is not a leave and a rejoin: Alex is not announced again.
    assert.deepEqual(joins, [['alex'], ['steve', 'notch']]);
  });

  test('an onJoin that throws does not break reading', async () => {
    const clock = new FakeClock();
    const lists = [['a'], ['a', 'b']];
    const cache = new PlayerCache({
      read: async () => lists.shift() ?? [],
      refreshMs: 1000,
      clock,
      logger: silent,
      onJoin: () => {
        throw new Error('boom');
      },
    });
    await cache.get();
    clock.advance(1000);
    assert.deepEqual(await cache.get(), ['a', 'b']);
  });
});

describe('PlayerCache.startWatching', () => {
  test('reads again whenever the list goes stale, so a join is noticed while nobody calls get', async () => {
    const clock = new FakeClock();
    const lists = [['Steve'], ['Steve'], ['Steve', 'Alex']];
    let calls = 0;
    const joins: string[][] = [];
    const cache = new PlayerCache({
      read: async () => {
        calls++;
        return lists.shift() ?? ['Steve', 'Alex'];
      },
      refreshMs: 2000,
      clock,
      logger: silent,
      onJoin: (ids) => joins.push(ids),
    });
    const stop = new AbortController();
    cache.startWatching(stop.signal);
    await waitFor(() => calls === 1 && clock.sleeping === 1, { what: 'the first background read' });
    clock.advance(1999);
    assert.equal(calls, 1);
    clock.advance(1);
    await waitFor(() => calls === 2 && clock.sleeping === 1, { what: 'the second background read' });
    clock.advance(2000);
    await waitFor(() => joins.length === 1, { what: 'the join to be noticed' });
    assert.deepEqual(joins, [['alex']]);
    stop.abort();
    await waitFor(() => clock.sleeping === 0, { what: 'the watcher to stop sleeping' });
    clock.advance(10_000);
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(calls, 3);
  });

  test('a read by the loop in between pushes the next background read back instead of doubling it', async () => {
    const clock = new FakeClock();
    let calls = 0;
    const cache = new PlayerCache({
      read: async () => {
        calls++;
        return [];
      },
      refreshMs: 2000,
      clock,
      logger: silent,
    });
    const stop = new AbortController();
    cache.startWatching(stop.signal);
    await waitFor(() => calls === 1 && clock.sleeping === 1, { what: 'the first background read' });
    clock.advance(2000);
    await waitFor(() => calls === 2 && clock.sleeping === 1, { what: 'the second background read' });
    clock.advance(500);
    await cache.get();
    assert.equal(calls, 2);
    clock.advance(1500);
    await waitFor(() => calls === 3 && clock.sleeping === 1, { what: 'the third background read' });
    stop.abort();
  });

  test('while the game server is unreachable the watcher waits between tries', async () => {
    const clock = new FakeClock();
    let calls = 0;
    const cache = new PlayerCache({
      read: async () => {
        calls++;
        throw new NotSentError('not connected');
      },
      refreshMs: 5000,
      clock,
      logger: silent,
    });
    const stop = new AbortController();
    cache.startWatching(stop.signal);
    await waitFor(() => calls === 1 && clock.sleeping === 1, { what: 'the first background read' });
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(calls, 1);
    clock.advance(1000);
    await waitFor(() => calls === 2 && clock.sleeping === 1, { what: 'the retry' });
    stop.abort();
  });

  test('with the real clock, aborting leaves no timer behind (the process can exit)', async () => {
    const timers = () => process.getActiveResourcesInfo().filter((kind) => kind === 'Timeout').length;
    const before = timers();
    let calls = 0;
    const cache = new PlayerCache({
      read: async () => {
        calls++;
        return ['a'];
      },
      refreshMs: 60_000,
      clock: systemClock,
      logger: silent,
    });
    const stop = new AbortController();
    cache.startWatching(stop.signal);
    await waitFor(() => calls === 1 && timers() > before, { what: 'the watcher to sleep on a timer' });
    stop.abort();
    await waitFor(() => timers() === before, { what: 'the timer to be cleared' });
    assert.equal(calls, 1);
  });
});
