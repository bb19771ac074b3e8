import { test } from 'node:test';
import assert from 'node:assert/strict';
import { backoffDelay, DEFAULT_RECONNECT_BACKOFF } from '../../src/net/backoff.js';

test('backoff doubles from 250 ms to a 10 s ceiling, jittered within the upper half', () => {
  const ceilings = [1, 2, 3, 4, 5, 6, 7, 8, 50].map((attempt) => backoffDelay(attempt, DEFAULT_RECONNECT_BACKOFF, () => 1));
  assert.deepEqual(ceilings, [250, 500, 1000, 2000, 4000, 8000, 10000, 10000, 10000]);
  const floors = [1, 2, 7].map((attempt) => backoffDelay(attempt, DEFAULT_RECONNECT_BACKOFF, () => 0));
  assert.deepEqual(floors, [125, 250, 5000]);
});
