import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { pino } from 'pino';
import { NotSentError } from '../../src/errors.js';
import { PlayerCache } from '../../src/players/cache.js';
import { FakeClock } from '../helpers/fake-clock.js';
import { fcOptions } from '../helpers/fc-options.js';

/**
 * players.joinGraceMs against any sequence of player reads, clock moves and wall-clock steps, on
 * the fake clock: an identifier is sent only once it has been listed by every successful read for
 * the grace (porter's first list excepted: everyone on it counts as settled), a leave and a
 * rejoin start it again, an unreachable game server makes everyone listed after it new, and a
 * step of the wall clock changes nothing.
 */

const PLAYERS = ['Alice', 'Bob', 'Carol', 'Dave'] as const;

type Event =
  /** Who the game server lists from now on. */
  | { readonly kind: 'world'; readonly online: readonly (typeof PLAYERS)[number][] }
  /** The next read fails: the server unreachable (passed on) or an unreadable answer (an empty list). */
  | { readonly kind: 'fail'; readonly unreachable: boolean }
  | { readonly kind: 'advance'; readonly ms: number }
  /** Date.now jumps (NTP, a thawed VM): porter's clock is the injected one and must not care. */
  | { readonly kind: 'wall-step'; readonly ms: number }
  /** The loop pulls: the cache reads (its list is always stale by then) and says what to send. */
  | { readonly kind: 'pull' };

const event: fc.Arbitrary<Event> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('world' as const), online: fc.subarray([...PLAYERS]) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('fail' as const), unreachable: fc.boolean() }) },
  {
    weight: 4,
    // Mostly short steps, so players come and go within a grace; the bounds themselves; now and then a long one.
    arbitrary: fc.record({
      kind: fc.constant('advance' as const),
      ms: fc.oneof(
        { weight: 4, arbitrary: fc.integer({ min: 0, max: 600 }) },
        { weight: 2, arbitrary: fc.constantFrom(998, 999, 1_000, 2_499, 2_500) },
        { weight: 1, arbitrary: fc.integer({ min: 0, max: 12_000 }) },
      ),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant('wall-step' as const), ms: fc.constantFrom(-86_400_000, -3_600_000, 3_600_000, 86_400_000) }),
  },
  { weight: 5, arbitrary: fc.constant({ kind: 'pull' as const }) },
);

/** What the grace promises, said plainly: when each listed identifier's unbroken run began. */
class Model {
  since = new Map<string, number>();
  first = true;
  /** Identifiers announced (onJoin) in their current run. */
  announced = new Set<string>();

  read(online: readonly string[], now: number): void {
    const ids = online.map((name) => name.toLowerCase());
    const next = new Map<string, number>();
    for (const id of ids) next.set(id, this.since.get(id) ?? (this.first ? Number.NEGATIVE_INFINITY : now));
    for (const id of this.announced) if (!next.has(id)) this.announced.delete(id);
    this.since = next;
    this.first = false;
  }

  unreachable(): void {
    this.since.clear();
    this.announced.clear();
    this.first = false;
  }

  sent(online: readonly string[], now: number, graceMs: number): string[] {
    return online.map((name) => name.toLowerCase()).filter((id) => now - this.since.get(id)! >= graceMs);
  }
}

async function play(events: readonly Event[], graceMs: number, wall: { offset: number }): Promise<void> {
  const clock = new FakeClock();
  const model = new Model();
  let world: readonly string[] = [];
  let nextFailure: 'unreachable' | 'unreadable' | undefined;
  let joined: string[] = [];
  const cache = new PlayerCache({
    read: async () => {
      const failure = nextFailure;
      nextFailure = undefined;
      if (failure === 'unreachable') throw new NotSentError('the game server is not connected');
      if (failure === 'unreadable') throw new Error('list command timed out');
      return [...world];
    },
    refreshMs: 1,
    joinGraceMs: graceMs,
    clock,
    logger: pino({ level: 'silent' }),
    onJoin: (ids) => joined.push(...ids),
  });
  let previousSent = new Set<string>();
  for (const step of events) {
    switch (step.kind) {
      case 'world':
        world = step.online;
        break;
      case 'fail':
        nextFailure = step.unreachable ? 'unreachable' : 'unreadable';
        break;
      case 'advance':
        clock.advance(step.ms);
        break;
      case 'wall-step':
        wall.offset += step.ms;
        break;
      case 'pull': {
        // Past refreshMs and the failure retry (both 1 ms here): every pull reads.
        clock.advance(1);
        const failure = nextFailure;
        joined = [];
        let sent: string[];
        try {
          sent = await cache.get();
        } catch (error) {
          assert.equal(failure, 'unreachable', `only an unreachable server may fail the pull: ${String(error)}`);
          assert.ok(error instanceof NotSentError);
          model.unreachable();
          previousSent = new Set();
          break;
        }
        if (failure === 'unreadable') {
          assert.deepEqual(sent, [], 'an unreadable list sends nobody');
          break;
        }
        model.read(world, clock.now());
        assert.deepEqual(sent, model.sent(world, clock.now(), graceMs), `at ${clock.now()}`);
        for (const id of joined) {
          assert.ok(sent.includes(id), `${id} was announced but not sent`);
          model.announced.add(id);
        }
        // Everyone who became sendable since the last pull, but for the settled of porter's first
        // list, was announced: the loop was woken for them.
        for (const id of sent) {
          if (previousSent.has(id) || model.since.get(id) === Number.NEGATIVE_INFINITY) continue;
          assert.ok(model.announced.has(id), `${id} became sendable without a wake-up`);
        }
        previousSent = new Set(sent);
        break;
      }
    }
  }
}

describe('players.joinGraceMs (property)', () => {
  test('an identifier is sent only after the grace of unbroken listing; rejoins restart it; the wall clock does not matter', async (t) => {
    const wall = { offset: 0 };
    const realNow = Date.now.bind(Date);
    t.mock.method(Date, 'now', () => realNow() + wall.offset);
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(0, 1, 1_000, 2_500, 10_000), fc.array(event, { maxLength: 60 }), async (graceMs, events) => {
        wall.offset = 0;
        await play(events, graceMs, wall);
      }),
      fcOptions({ numRuns: 400 }),
    );
  });
});
