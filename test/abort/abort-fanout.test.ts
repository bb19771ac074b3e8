import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { AbortFanout, type FanoutWait } from '../../src/abort-fanout.js';
import { fcOptions } from '../helpers/fc-options.js';

/**
 * The fanout stands in for an abort listener per wait: whatever waits begin and end on whichever
 * signals, an abort tells exactly the waits on that signal still under way, once, and nothing else.
 */
test('an abort tells exactly the waits still under way on its signal, once each', () => {
  const step = fc.oneof(
    fc.record({ kind: fc.constant('on' as const), signal: fc.nat({ max: 2 }) }),
    fc.record({ kind: fc.constant('off' as const), wait: fc.nat({ max: 30 }) }),
    fc.record({ kind: fc.constant('abort' as const), signal: fc.nat({ max: 2 }) }),
  );
  fc.assert(
    fc.property(fc.array(step, { maxLength: 60 }), (steps) => {
      const fanout = new AbortFanout();
      const controllers = [new AbortController(), new AbortController(), new AbortController()];
      const waits: Array<{ signal: number; ended: boolean; told: number; handle?: FanoutWait }> = [];
      const expected: number[] = [];
      for (const s of steps) {
        if (s.kind === 'on') {
          const wait: (typeof waits)[number] = { signal: s.signal, ended: false, told: 0 };
          waits.push(wait);
          wait.handle = fanout.on(controllers[s.signal]!.signal, () => void wait.told++);
          // Never told for an abort that came before the wait began (as addEventListener).
          expected.push(0);
        } else if (s.kind === 'off') {
          const wait = waits[s.wait];
          if (wait === undefined) continue;
          wait.ended = true;
          wait.handle!.end();
        } else {
          const controller = controllers[s.signal]!;
          if (controller.signal.aborted) continue;
          waits.forEach((wait, i) => {
            if (wait.signal === s.signal && !wait.ended) expected[i] = 1;
          });
          controller.abort();
        }
      }
      assert.deepEqual(
        waits.map((w) => w.told),
        expected,
      );
    }),
    fcOptions({ numRuns: 300 }),
  );
});

test('a wait ended by another during the abort is not told, as EventTarget skips a listener removed during dispatch', () => {
  const fanout = new AbortFanout();
  const controller = new AbortController();
  const told: string[] = [];
  let second: FanoutWait | undefined = undefined;
  fanout.on(controller.signal, () => {
    told.push('first');
    second?.end();
  });
  second = fanout.on(controller.signal, () => told.push('second'));
  controller.abort();
  assert.deepEqual(told, ['first']);
});

test('one listener on the signal however many waits', () => {
  const fanout = new AbortFanout();
  const controller = new AbortController();
  let added = 0;
  const add = controller.signal.addEventListener.bind(controller.signal);
  controller.signal.addEventListener = (...args: Parameters<typeof add>) => {
    added++;
    add(...args);
  };
  for (let i = 0; i < 100; i++) {
    fanout.on(controller.signal, () => undefined).end();
  }
  assert.equal(added, 1);
});
