import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { ConnectionShare } from '../../../src/api/wire/connection-share.js';
import { fcOptions } from '../../helpers/fc-options.js';

/**
 * The fair share of one origin's connections (src/api/wire/connection-share.ts), under any sequence of
 * requests, answers and abandoned waits from any mix of stores: never more in use than there are
 * connections, never a free connection left while a store that may take it waits, and never a
 * store holding none kept waiting while another holds more than one.
 */

type Op =
  | { readonly kind: 'take'; readonly store: number; readonly abandon: boolean }
  | { readonly kind: 'end'; readonly pick: number }
  | { readonly kind: 'abandon'; readonly pick: number };

const op = (stores: number): fc.Arbitrary<Op> =>
  fc.oneof(
    { weight: 5, arbitrary: fc.record({ kind: fc.constant('take' as const), store: fc.nat({ max: stores - 1 }), abandon: fc.boolean() }) },
    { weight: 4, arbitrary: fc.record({ kind: fc.constant('end' as const), pick: fc.nat() }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('abandon' as const), pick: fc.nat() }) },
  );

const world = fc
  .integer({ min: 1, max: 6 })
  .chain((cap) =>
    fc
      .integer({ min: 1, max: cap })
      .chain((stores) => fc.tuple(fc.constant(cap), fc.constant(stores), fc.array(op(stores), { maxLength: 200 }))),
  );

interface Request {
  readonly store: string;
  readonly abort: AbortController;
  granted: boolean;
  settled: boolean;
}

const flush = () => new Promise<void>((resolve) => setImmediate(resolve));

test('fair share: within the cap, work-conserving, and a store holding none never waits behind one holding two', async () => {
  await fc.assert(
    fc.asyncProperty(world, async ([cap, stores, ops]) => {
      const share = new ConnectionShare(cap);
      const names = Array.from({ length: stores }, (_, i) => `store-${i}`);
      for (const name of names) share.join(name);
      const requests: Request[] = [];
      const held = new Map<string, number>();
      const check = () => {
        const inUse = [...held.values()].reduce((a, b) => a + b, 0);
        assert.equal(share.inUse, inUse);
        assert.ok(inUse <= cap, `${inUse} in use, cap ${cap}`);
        const waiting = requests.filter((r) => !r.granted && !r.settled);
        for (const w of waiting) {
          if ((held.get(w.store) ?? 0) > 0) continue;
          // A store holding none waits only when no connection is free and none is held twice.
          assert.equal(inUse, cap, `${w.store} holds none and waits with ${cap - inUse} free`);
          for (const [store, n] of held) assert.ok(n <= 1, `${w.store} holds none and waits while ${store} holds ${n}`);
        }
      };
      for (const step of ops) {
        if (step.kind === 'take') {
          const request: Request = { store: names[step.store]!, abort: new AbortController(), granted: false, settled: false };
          requests.push(request);
          share.take(request.store, request.abort.signal).then(
            () => {
              request.granted = true;
              held.set(request.store, (held.get(request.store) ?? 0) + 1);
            },
            () => (request.settled = true),
          );
        } else {
          const candidates = requests.filter((r) => (step.kind === 'end' ? r.granted && !r.settled : !r.granted && !r.settled));
          const chosen = candidates[step.pick % Math.max(1, candidates.length)];
          if (chosen && step.kind === 'end') {
            chosen.settled = true;
            held.set(chosen.store, held.get(chosen.store)! - 1);
            share.release(chosen.store);
          } else chosen?.abort.abort(new Error('abandoned'));
        }
        await flush();
        check();
      }
    }),
    fcOptions({ numRuns: 200 }),
  );
});
