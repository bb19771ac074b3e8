import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { PlayerCache } from '../../src/players/cache.js';
import { JoinGrace } from '../../src/players/join-grace.js';
import { FakeClock } from '../helpers/fake-clock.js';
import { waitFor } from '../helpers/wait-for.js';

const silent = pino({ level: 'silent' });

/** A watched cache whose reads return `world` as it is at the time of the read. */
function watched(options: { refreshMs: number; joinGraceMs: number }) {
  const clock = new FakeClock();
  const state = { world: ['Steve'], reads: 0, joins: [] as { ids: string[]; at: number }[] };
  const cache = new PlayerCache({
    read: async () => {
      state.reads++;
      return [...state.world];
    },
    ...options,
    clock,
    logger: silent,
    onJoin: (ids) => state.joins.push({ ids, at: clock.now() }),
  });
  const stop = new AbortController();
  cache.startWatching(stop.signal);
  return { clock, state, cache, stop };
}

describe('the join grace in the watched player cache', () => {
  test('wakes the loop when a grace ends, not at the next read and not at the join', async () => {
    const { clock, state, cache, stop } = watched({ refreshMs: 30_000, joinGraceMs: 5_000 });
    await waitFor(() => state.reads === 1 && clock.sleeping === 1, { what: 'the first read' });
    state.world = ['Steve', 'Alex'];
    clock.advance(30_000);
    await waitFor(() => state.reads === 2 && clock.sleeping === 1, { what: 'the read that sees Alex' });
    // Seen, held back, and no wake-up yet: a pull now could not claim for Alex.
    assert.deepEqual(state.joins, []);
    assert.deepEqual(await cache.get(), ['steve']);
    clock.advance(4_999);
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(state.joins, []);
    assert.deepEqual(await cache.get(), ['steve']);
    clock.advance(1);
    await waitFor(() => state.joins.length === 1, { what: 'the wake-up at the end of the grace' });
    // 25 s before the next read: the watcher slept until the grace ended, not until refreshMs.
    assert.deepEqual(state.joins, [{ ids: ['alex'], at: 1_700_000_035_000 }]);
    assert.equal(state.reads, 2);
    assert.deepEqual(await cache.get(), ['steve', 'alex']);
    stop.abort();
    await waitFor(() => clock.sleeping === 0, { what: 'the watcher to stop' });
  });

  test('a player who leaves during the grace is never announced, and gets a new grace on return', async () => {
    const { clock, state, cache, stop } = watched({ refreshMs: 1_000, joinGraceMs: 3_000 });
    await waitFor(() => state.reads === 1 && clock.sleeping === 1, { what: 'the first read' });
    state.world = ['Steve', 'Alex'];
    clock.advance(1_000); // t = 1000: Alex seen
    await waitFor(() => state.reads === 2 && clock.sleeping === 1, { what: 'the read that sees Alex' });
    state.world = ['Steve'];
    clock.advance(1_000); // t = 2000: Alex gone
    await waitFor(() => state.reads === 3 && clock.sleeping === 1, { what: 'the read without Alex' });
    state.world = ['Steve', 'Alex'];
    clock.advance(1_000); // t = 3000: Alex back, a new grace until 6000
    await waitFor(() => state.reads === 4 && clock.sleeping === 1, { what: 'the read that sees Alex again' });
    for (let t = 4_000; t <= 5_000; t += 1_000) {
      clock.advance(1_000);
      await waitFor(() => state.reads === t / 1_000 + 1 && clock.sleeping === 1, { what: `the read at ${t}` });
      assert.deepEqual(await cache.get(), ['steve'], `Alex sent at ${t}, within his second grace`);
    }
    assert.deepEqual(state.joins, []);
    clock.advance(1_000);
    await waitFor(() => state.joins.length === 1, { what: 'the end of the second grace' });
    assert.deepEqual(state.joins[0], { ids: ['alex'], at: 1_700_000_006_000 });
    stop.abort();
  });

  test('with no grace, a new player is sendable and announced at the read that sees them', async () => {
    const { clock, state, cache, stop } = watched({ refreshMs: 1_000, joinGraceMs: 0 });
    await waitFor(() => state.reads === 1 && clock.sleeping === 1, { what: 'the first read' });
    state.world = ['Steve', 'Alex'];
    clock.advance(1_000);
    await waitFor(() => state.joins.length === 1, { what: 'the join' });
    assert.deepEqual(state.joins, [{ ids: ['alex'], at: 1_700_000_001_000 }]);
    assert.deepEqual(await cache.get(), ['steve', 'alex']);
    stop.abort();
  });
});

describe('JoinGrace', () => {
  test('refuses a grace that is not a whole number of milliseconds', () => {
    for (const bad of [-1, 0.5, Number.NaN, Number.POSITIVE_INFINITY]) assert.throws(() => new JoinGrace(bad), RangeError);
  });

  test('porter’s first list is settled; after the game server was unreachable, everyone listed is new', () => {
    const grace = new JoinGrace(1_000);
    assert.deepEqual(grace.listed(['a', 'b'], 0), []);
    assert.deepEqual(grace.sendable(['a', 'b'], 0), ['a', 'b']);
    grace.lost();
    assert.deepEqual(grace.listed(['a', 'b'], 10), []);
    assert.deepEqual(grace.sendable(['a', 'b'], 1_009), []);
    assert.equal(grace.msUntilNextEnd(1_009), 1);
    assert.deepEqual(grace.listed(['a', 'b'], 1_010), ['a', 'b']);
    assert.deepEqual(grace.sendable(['a', 'b'], 1_010), ['a', 'b']);
    assert.equal(grace.msUntilNextEnd(1_010), undefined);
  });
});
