import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SerialLane } from '../../src/serial-lane.js';

test('tasks run one at a time in order', async () => {
  const lane = new SerialLane();
  let running = 0;
  let most = 0;
  const order: number[] = [];
  const gates: Array<() => void> = [];
  const tasks = [0, 1, 2].map((i) =>
    lane.run(async () => {
      running++;
      most = Math.max(most, running);
      await new Promise<void>((resolve) => gates.push(resolve));
      order.push(i);
      running--;
      return i;
    }),
  );
  for (let i = 0; i < 3; i++) {
    while (gates.length <= i) await new Promise((r) => setImmediate(r));
    gates[i]!();
  }
  assert.deepEqual(await Promise.all(tasks), [0, 1, 2]);
  assert.deepEqual(order, [0, 1, 2]);
  assert.equal(most, 1);
});

test('an aborted waiter leaves without running and without holding up the next', async () => {
  const lane = new SerialLane();
  let release!: () => void;
  const first = lane.run(() => new Promise<string>((resolve) => (release = () => resolve('first'))));
  const controller = new AbortController();
  let ran = false;
  const aborted = lane.run(async () => {
    ran = true;
  }, controller.signal);
  const third = lane.run(async () => 'third');
  controller.abort(new Error('stop'));
  await assert.rejects(aborted, /stop/);
  release();
  assert.equal(await first, 'first');
  assert.equal(await third, 'third');
  assert.equal(ran, false);
});

test('a failing task does not block the lane', async () => {
  const lane = new SerialLane();
  await assert.rejects(
    lane.run(async () => Promise.reject(new Error('boom'))),
    /boom/,
  );
  assert.equal(await lane.run(async () => 1), 1);
});
