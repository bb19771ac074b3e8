import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  Budget,
  BudgetExceededError,
  RETRY_AFTER_FLOOR_MS,
  RETRY_AFTER_MAX_MS,
  type BudgetSettings,
} from '../../../src/api/budget/budget.js';
import { EXACT_UP_TO } from '../../../src/api/budget/budget-log.js';
import { FixedWindows } from '../../../src/sim/seller-api-limits.js';
import { FakeClock } from '../../helpers/fake-clock.js';

/**
 * The budget's promises against any sequence of events a hostile API and a broken clock can make,
 * on the fake clock. Replay a failure with PORTER_FC_SEED=<seed printed by fast-check>.
 */
const SEED = Number(process.env.PORTER_FC_SEED ?? 20_250_909);

type Event =
  | { readonly kind: 'attempt'; readonly times: number }
  | { readonly kind: 'wait-as-told' }
  | { readonly kind: 'answer'; readonly remaining: number | undefined; readonly limit: number | undefined }
  | { readonly kind: 'no-answer' }
  /** The call taken last was withheld at the send, never written (a gate shut during its wait). */
  | { readonly kind: 'withheld' }
  | { readonly kind: '429'; readonly retryAfterMs: number | undefined; readonly remaining: number | undefined }
  | { readonly kind: 'advance'; readonly ms: number };

const headerNumber = fc.oneof(
  fc.constant(undefined),
  fc.constantFrom(0, 1, 3, 99, 100, 101, 119, 120, 121),
  fc.integer({ min: 0, max: 5_000 }),
  fc.constantFrom(Number.NaN, -1, -100, Number.POSITIVE_INFINITY, 1e12, 0.5),
);

const retryAfter = fc.oneof(
  fc.constant(undefined),
  fc.constantFrom(0, -5_000, -1, Number.NaN, 0.2, 999, 1_000, 1_001),
  fc.integer({ min: 0, max: 300_000 }),
  fc.double({ min: 0, max: 10_000, noNaN: true }),
  // 3000000 s, setTimeout's limit and beyond.
  fc.constantFrom(3_000_000_000, 2 ** 31 - 1, 2 ** 31, 2 ** 53, Number.MAX_VALUE, Number.POSITIVE_INFINITY),
);

const advance = fc.oneof(
  fc.constant(0),
  fc.integer({ min: 1, max: 100 }),
  fc.integer({ min: 0, max: 150_000 }),
  fc.integer({ min: 3_600_000, max: 10_000_000_000 }),
);

const event: fc.Arbitrary<Event> = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: 1, max: 40 }).map((times) => ({ kind: 'attempt' as const, times })) },
  { weight: 2, arbitrary: fc.constant({ kind: 'wait-as-told' as const }) },
  { weight: 5, arbitrary: fc.record({ kind: fc.constant('answer' as const), remaining: headerNumber, limit: headerNumber }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'no-answer' as const }) },
  { weight: 2, arbitrary: fc.constant({ kind: 'withheld' as const }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('429' as const), retryAfterMs: retryAfter, remaining: headerNumber }) },
  { weight: 4, arbitrary: advance.map((ms) => ({ kind: 'advance' as const, ms })) },
);

const settings: fc.Arbitrary<BudgetSettings> = fc
  .record({
    perWindow: fc.oneof(fc.integer({ min: 1, max: 130 }), fc.integer({ min: 1, max: 3_000 })),
    windowMs: fc.oneof(fc.constant(60_000), fc.integer({ min: 50, max: 200_000 })),
    share: fc.oneof(fc.constant(1), fc.constantFrom(0.5, 0.25, 0.999), fc.double({ min: 0.01, max: 1, noNaN: true })),
  })
  .filter((s) => Math.floor(s.perWindow * s.share) >= 1);

/** Porter's sends, to count them in any rolling window (times never go backwards). */
class SendLog {
  readonly #times: number[] = [];
  #first = 0;

  /** Records a send at `at`; returns how many sends lie in (at − windowMs, at]. */
  add(at: number, windowMs: number): number {
    this.#times.push(at);
    while (this.#times[this.#first]! <= at - windowMs) this.#first++;
    return this.#times.length - this.#first;
  }

  /** The last send never happened after all. */
  dropLast(): void {
    this.#times.pop();
    this.#first = Math.min(this.#first, this.#times.length);
  }
}

describe('Budget: properties under any sequence of answers, 429s and clock moves', () => {
  test('(a) own cap in any rolling window, (b) nothing before a Retry-After ends, (c) 1 s after any 429, (d) no zero-delay loop', () => {
    fc.assert(
      fc.property(settings, fc.array(event, { maxLength: 250 }), (config, events) => {
        const clock = new FakeClock();
        const budget = new Budget(config, clock);
        const cap = Math.floor(config.perWindow * config.share);
        const granularity = cap > EXACT_UP_TO ? config.windowMs / EXACT_UP_TO : 0;
        const longestWait = Math.max(RETRY_AFTER_MAX_MS, config.windowMs + granularity);
        const sends = new SendLog();
        let retryAfterEnds = Number.NEGATIVE_INFINITY;
        let floorEnds = Number.NEGATIVE_INFINITY;
        /** Calls taken and not yet answered, unanswered or withheld: the newest may be withheld. */
        let open = 0;

        const checkedDelay = (): number => {
          const delay = budget.delayFor('pull');
          assert.ok(Number.isInteger(delay) && delay >= 0, `delayFor gave ${delay}`);
          assert.ok(delay <= longestWait, `delayFor gave ${delay} ms, more than the clamp ${longestWait}`);
          return delay;
        };

        for (const e of events) {
          switch (e.kind) {
            case 'attempt':
              for (let i = 0; i < e.times; i++) {
                const now = clock.now();
                const delay = checkedDelay();
                if (delay > 0) {
                  // Refused either way, and a refusal records nothing.
                  assert.equal(budget.tryTake('pull'), false, `tryTake took a call delayFor held back ${delay} ms`);
                  assert.equal(budget.delayFor('pull'), delay, 'a refused tryTake changed the budget');
                  assert.throws(() => budget.take('pull'), BudgetExceededError);
                  break;
                }
                // (d): delayFor said 0, so the take is allowed, by either door…
                if (i % 2 === 0) budget.take('pull');
                else assert.equal(budget.tryTake('pull'), true, 'tryTake refused a call delayFor allowed');
                open++;
                const inWindow = sends.add(now, config.windowMs);
                assert.ok(inWindow <= cap, `(a) ${inWindow} calls within ${config.windowMs} ms, cap ${cap}`); // …and keeps (a)
                assert.ok(now >= retryAfterEnds, `(b) a call ${retryAfterEnds - now} ms before Retry-After ended`);
                assert.ok(now >= floorEnds, `(c) a call ${floorEnds - now} ms after a 429`);
              }
              break;
            case 'wait-as-told': {
              const delay = checkedDelay();
              if (delay > 0) {
                clock.advance(delay);
                assert.equal(budget.delayFor('pull'), 0, 'waiting as long as delayFor said must allow a call');
              }
              break;
            }
            case 'answer':
              budget.observe('pull', { remaining: e.remaining, limit: e.limit });
              open = Math.max(0, open - 1);
              break;
            case 'no-answer':
              budget.observe('pull', {});
              open = Math.max(0, open - 1);
              break;
            case 'withheld':
              // Only a call in hand can be withheld; (a) then counts the calls actually written.
              if (open > 0) {
                budget.withdraw('pull');
                sends.dropLast();
                open--;
              }
              break;
            case '429': {
              const now = clock.now();
              open = Math.max(0, open - 1);
              budget.observe('pull', { remaining: e.remaining, retryAfterMs: e.retryAfterMs, limited: true });
              floorEnds = Math.max(floorEnds, now + RETRY_AFTER_FLOOR_MS);
              const asked = e.retryAfterMs === undefined || Number.isNaN(e.retryAfterMs) ? config.windowMs : Math.ceil(e.retryAfterMs);
              if (asked > 0) retryAfterEnds = Math.max(retryAfterEnds, now + Math.min(RETRY_AFTER_MAX_MS, asked));
              const delay = checkedDelay();
              assert.ok(delay >= RETRY_AFTER_FLOOR_MS, `a 429 paused only ${delay} ms`);
              break;
            }
            case 'advance':
              clock.advance(e.ms);
              break;
          }
        }
      }),
      { seed: SEED, numRuns: 300 },
    );
  });

  test("alone against the platform's fixed windows, with any latency: never a 429, and the budget is used", () => {
    fc.assert(
      fc.property(
        fc.record({ perWindow: fc.integer({ min: 1, max: 30 }), windowMs: fc.integer({ min: 200, max: 5_000 }) }),
        fc.array(
          fc.record({
            think: fc.integer({ min: 0, max: 50 }),
            there: fc.integer({ min: 0, max: 60 }),
            back: fc.integer({ min: 0, max: 60 }),
          }),
          {
            minLength: 50,
            maxLength: 400,
          },
        ),
        ({ perWindow, windowMs }, calls) => {
          const clock = new FakeClock();
          const budget = new Budget({ perWindow, windowMs, share: 1 }, clock);
          const platform = new FixedWindows(perWindow, windowMs);
          const started = clock.now();
          for (const call of calls) {
            clock.advance(call.think);
            clock.advance(budget.delayFor('pull'));
            budget.take('pull');
            clock.advance(call.there);
            const answer = platform.check('porter|pull', clock.now());
            assert.ok(answer.allowed, `the platform refused porter at ${clock.now() - started} ms`);
            clock.advance(call.back);
            budget.observe('pull', { remaining: answer.remaining, limit: answer.limit });
          }
          // Each window's calls can be late by one round trip and the think time: never by more.
          const slowest = Math.max(...calls.map((c) => c.think + c.there + c.back));
          const windows = Math.ceil(calls.length / perWindow) - 1;
          assert.ok(
            clock.now() - started <= windows * (windowMs + slowest) + calls.length * slowest,
            'porter was held back beyond its budget',
          );
        },
      ),
      { seed: SEED, numRuns: 150 },
    );
  });
});
