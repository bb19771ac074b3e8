import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { SerialLane } from '../../src/serial-lane.js';
import { fcOptions } from '../helpers/fc-options.js';

/**
 * The lane is what keeps one API call per route in flight (the budget's arithmetic) and one RCON
 * request per connection. Any mix of tasks that hold the lane for a while, fail, or whose callers
 * give up before or after their turn: never two tasks at once, tasks start in the order they were
 * queued, a caller that gave up before its turn never runs, and nobody waits forever behind one
 * that gave up. The free lane takes a shorter path than a busy one, so both are in every run.
 */
const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

const task = fc.record({
  gapTicks: fc.integer({ min: 0, max: 3 }),
  holdTicks: fc.integer({ min: 0, max: 4 }),
  fails: fc.boolean(),
  abortAfterTicks: fc.option(fc.integer({ min: 0, max: 8 }), { nil: undefined }),
  abortedAtOnce: fc.boolean(),
});

test('any mix of slow, failing and abandoned tasks: one at a time, in order, and abandoned ones never run', async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(task, { minLength: 1, maxLength: 12 }), async (tasks) => {
      const lane = new SerialLane();
      let running = 0;
      let most = 0;
      const started: number[] = [];
      const results: Promise<{ ok: number } | { error: unknown }>[] = [];
      const controllers: (AbortController | undefined)[] = [];
      for (const [i, t] of tasks.entries()) {
        for (let k = 0; k < t.gapTicks; k++) await tick();
        const controller = t.abortAfterTicks === undefined && !t.abortedAtOnce ? undefined : new AbortController();
        controllers.push(controller);
        if (controller && t.abortedAtOnce) controller.abort(new Error(`gave up ${i}`));
        else if (controller) {
          void (async () => {
            for (let k = 0; k < t.abortAfterTicks!; k++) await tick();
            controller.abort(new Error(`gave up ${i}`));
          })();
        }
        results.push(
          lane
            .run(async () => {
              assert.equal(controller?.signal.aborted ?? false, false, `task ${i} started after its caller gave up`);
              running++;
              most = Math.max(most, running);
              started.push(i);
              for (let k = 0; k < t.holdTicks; k++) await tick();
              running--;
              if (t.fails) throw new Error(`task ${i} failed`);
              return i;
            }, controller?.signal)
            .then(
              (ok) => ({ ok }),
              (error: unknown) => ({ error }),
            ),
        );
      }
      const settled = await Promise.all(results);
      await lane.idle();
      assert.ok(most <= 1, `${most} tasks ran at once`);
      assert.deepEqual(
        started,
        [...started].sort((a, b) => a - b),
        'tasks started in the order they were queued',
      );
      settled.forEach((result, i) => {
        if (started.includes(i)) {
          if (tasks[i]!.fails) assert.match(String((result as { error: Error }).error?.message), new RegExp(`task ${i} failed`));
          else assert.deepEqual(result, { ok: i });
        } else {
          assert.ok(controllers[i]?.signal.aborted, `task ${i} neither ran nor was given up`);
          assert.equal((result as { error: Error }).error, controllers[i].signal.reason, 'a caller that gave up gets its own reason');
        }
      });
    }),
    fcOptions({ numRuns: 150 }),
  );
});
