import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ReloadQueue } from '../../src/reload-queue.js';
import { waitFor } from '../helpers/wait-for.js';

/** A reload that runs until the test lets it finish. */
function gatedReloads() {
  const gates: Array<() => void> = [];
  let runs = 0;
  const run = async () => {
    runs++;
    await new Promise<void>((resolve) => gates.push(resolve));
  };
  return { run, runs: () => runs, finish: () => gates.shift()?.() };
}

test('nothing runs before open(); requests made while starting become one reload', async () => {
  const reloads = gatedReloads();
  const queue = new ReloadQueue(reloads.run, () => false);
  queue.request();
  queue.request();
  await Promise.resolve();
  assert.equal(reloads.runs(), 0);
  queue.open();
  await waitFor(() => reloads.runs() === 1);
  reloads.finish();
  await queue.idle();
  assert.equal(reloads.runs(), 1);
});

test('requests while a reload runs make one more, not one each', async () => {
  const reloads = gatedReloads();
  const queue = new ReloadQueue(reloads.run, () => false);
  queue.open();
  queue.request();
  await waitFor(() => reloads.runs() === 1);
  for (let i = 0; i < 5; i++) queue.request();
  reloads.finish();
  await waitFor(() => reloads.runs() === 2);
  reloads.finish();
  await queue.idle();
  assert.equal(reloads.runs(), 2);
});

test('a request is dropped when porter stops before it runs', async () => {
  const reloads = gatedReloads();
  let stopping = false;
  const queue = new ReloadQueue(reloads.run, () => stopping);
  queue.request();
  stopping = true;
  queue.open();
  await queue.idle();
  assert.equal(reloads.runs(), 0);
});
