import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ReplayMemory } from '../../src/webhook/replay-memory.js';

describe('replay memory', () => {
  test('an id is remembered for the window, per scope, then forgotten', () => {
    const memory = new ReplayMemory(1000);
    assert.equal(memory.seenBefore('a', ['x'], 0), false);
    assert.equal(memory.seenBefore('a', ['x'], 500), true);
    assert.equal(memory.seenBefore('b', ['x'], 500), false, 'another store or kind of id');
    // Seen again at 500: remembered until 1500.
    assert.equal(memory.seenBefore('a', ['x'], 1499), true);
    assert.equal(memory.seenBefore('a', ['x'], 2600), false);
  });

  test('a flood of distinct ids cannot grow it past its capacity; the oldest are forgotten first', () => {
    const memory = new ReplayMemory(60_000, 100);
    for (let i = 0; i < 10_000; i++) memory.seenBefore('s', [`id-${i}-${'x'.repeat(i % 50)}`], i);
    assert.equal(memory.size, 100);
    assert.equal(memory.seenBefore('s', [`id-9999-${'x'.repeat(9999 % 50)}`], 10_000), true, 'the newest is still known');
    // An evicted id wakes once more: a hint, paid for by one budgeted pull.
    assert.equal(memory.seenBefore('s', ['id-0-'], 10_001), false);
  });

  test('expired ids leave the memory as time passes, without a flood', () => {
    const memory = new ReplayMemory(100);
    for (let i = 0; i < 50; i++) memory.seenBefore('s', [`id-${i}`], i);
    memory.seenBefore('s', ['late'], 1000);
    assert.equal(memory.size, 1);
  });
});
