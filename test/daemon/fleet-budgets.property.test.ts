import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { Budget, BudgetSettings } from '../../src/api/budget/budget.js';
import type { Route } from '../../src/api/types.js';
import { FleetBudgets } from '../../src/daemon/fleet-budgets.js';
import { FakeClock } from '../helpers/fake-clock.js';
import { fcOptions } from '../helpers/fc-options.js';

/**
 * The lifetime of the fleet's call budgets (docs/design.md#the-call-budget) over any sequence of
 * reloads that add, remove and add back servers, the settling of removed servers' claims, calls,
 * 429s and clock moves, on the fake clock: the budgets held are exactly those something may spend
 * plus those whose calls the API still counts, and no server exceeds its per-route limit across a
 * remove and re-add.
 */

const SETTINGS: BudgetSettings = { perWindow: 4, windowMs: 60_000, share: 1 };
const CAP = Math.floor(SETTINGS.perWindow * SETTINGS.share);
const IDS = ['a', 'B', 'c', 'd', 'e'] as const;
const ROUTES: readonly Route[] = ['pull', 'done', 'fail'];

type Event =
  /** A reload: these servers are configured; the removed ones in `settle` go on settling their claims. */
  | { readonly kind: 'reload'; readonly configured: readonly number[]; readonly settle: readonly number[] }
  | { readonly kind: 'settled'; readonly server: number }
  | { readonly kind: 'calls'; readonly server: number; readonly route: number; readonly times: number; readonly upperCase: boolean }
  | { readonly kind: '429'; readonly server: number; readonly route: number; readonly retryAfterMs: number }
  | { readonly kind: 'advance'; readonly ms: number };

const server = fc.integer({ min: 0, max: IDS.length - 1 });
const route = fc.integer({ min: 0, max: ROUTES.length - 1 });
const subset = fc.uniqueArray(server, { maxLength: IDS.length });
const event: fc.Arbitrary<Event> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('reload' as const), configured: subset, settle: subset }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('settled' as const), server }) },
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant('calls' as const),
      server,
      route,
      times: fc.integer({ min: 1, max: 8 }),
      upperCase: fc.boolean(),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant('429' as const), server, route, retryAfterMs: fc.integer({ min: 1_000, max: 200_000 }) }),
  },
  {
    weight: 4,
    arbitrary: fc
      .oneof(fc.integer({ min: 0, max: 5_000 }), fc.integer({ min: 50_000, max: 70_000 }), fc.integer({ min: 0, max: 300_000 }))
      .map((ms) => ({
        kind: 'advance' as const,
        ms,
      })),
  },
);

/** Lets the fleet budgets' wake (a sleep on the fake clock) run its sweep. */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

/** What the test knows of each server: its calls per route (answer times), and until when a 429 stops a route. */
class Model {
  readonly configured = new Set<string>();
  readonly settling = new Set<string>();
  readonly calls = new Map<string, number[]>();
  readonly blockedUntil = new Map<string, number>();
  /** The budget object handed out for each server id while it is held. */
  readonly handed = new Map<string, Budget>();

  inUse(): Set<string> {
    return new Set([...this.configured, ...this.settling]);
  }

  /** When the API no longer counts any call of `key`, and no 429 pause of it runs. */
  quietAt(key: string): number {
    let quiet = Number.NEGATIVE_INFINITY;
    for (const r of ROUTES) {
      const times = this.calls.get(`${key}|${r}`) ?? [];
      if (times.length > 0) quiet = Math.max(quiet, times[times.length - 1]! + SETTINGS.windowMs);
      quiet = Math.max(quiet, this.blockedUntil.get(`${key}|${r}`) ?? quiet);
    }
    return quiet;
  }
}

async function play(events: readonly Event[]): Promise<void> {
  const clock = new FakeClock();
  const model = new Model();
  const budgets = new FleetBudgets(clock, () => model.inUse());
  const budgetOf = (id: string): Budget => {
    const key = id.toLowerCase();
    const held = model.handed.get(key);
    const budget = budgets.for(id, () => SETTINGS);
    if (held) assert.equal(budget, held, `server ${key}: a budget still held is handed out again, not a new one`);
    model.handed.set(key, budget);
    return budget;
  };
  try {
    for (const [step, e] of events.entries()) {
      switch (e.kind) {
        case 'reload': {
          const next = new Set(e.configured.map((i) => IDS[i]!.toLowerCase()));
          for (const key of model.configured)
            if (!next.has(key) && e.settle.includes(IDS.findIndex((id) => id.toLowerCase() === key))) model.settling.add(key);
          model.configured.clear();
          for (const key of next) {
            model.configured.add(key);
            // Added back: its own loop reports what it owes from now on.
            model.settling.delete(key);
          }
          budgets.sweep();
          break;
        }
        case 'settled':
          model.settling.delete(IDS[e.server]!.toLowerCase());
          budgets.sweep();
          break;
        case 'calls':
        case '429': {
          const id = e.kind === 'calls' && e.upperCase ? IDS[e.server]!.toUpperCase() : IDS[e.server]!;
          const key = id.toLowerCase();
          // Only a server that is configured or settling spends its budget.
          if (!model.inUse().has(key)) break;
          const budget = budgetOf(id);
          const r = ROUTES[e.route]!;
          for (let i = 0; i < (e.kind === 'calls' ? e.times : 1); i++) {
            if (budget.delayFor(r) > 0) break;
            budget.take(r);
            const now = clock.now();
            const times = model.calls.get(`${key}|${r}`) ?? [];
            times.push(now);
            model.calls.set(`${key}|${r}`, times);
            if (e.kind === '429') {
              budget.observe(r, { limited: true, retryAfterMs: e.retryAfterMs });
              model.blockedUntil.set(`${key}|${r}`, Math.max(model.blockedUntil.get(`${key}|${r}`) ?? 0, now + e.retryAfterMs));
            } else budget.observe(r, {});
            const counted = times.filter((at) => at > now - SETTINGS.windowMs).length;
            assert.ok(counted <= CAP, `step ${step}: server ${key} sent ${counted} ${r} calls within one window (cap ${CAP})`);
          }
          break;
        }
        case 'advance':
          clock.advance(e.ms);
          await settle();
      }
      const now = clock.now();
      const inUse = model.inUse();
      const expected = [...model.handed.keys()].filter((key) => inUse.has(key) || model.quietAt(key) > now).sort();
      assert.deepEqual(
        budgets.keys().sort(),
        expected,
        `step ${step} (${e.kind}) at +${now - 1_700_000_000_000} ms: the budgets held are those in use or still counted`,
      );
      for (const key of [...model.handed.keys()]) if (!expected.includes(key)) model.handed.delete(key);
    }
  } finally {
    budgets.close();
  }
}

describe('the fleet keeps a server’s budget exactly while it can be spent or the API still counts its calls', () => {
  test('any reloads, settlings, calls, 429s and clock moves', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(event, { minLength: 1, maxLength: 60 }), (events) => play(events)),
      fcOptions({ numRuns: 300 }),
    );
  });

  test('a server removed and added back within the window gets its budget back: no room made in a window the API still counts', async () => {
    await play([
      { kind: 'reload', configured: [0], settle: [] },
      { kind: 'calls', server: 0, route: 0, times: CAP, upperCase: false },
      { kind: 'reload', configured: [], settle: [] },
      { kind: 'advance', ms: SETTINGS.windowMs - 1 },
      { kind: 'reload', configured: [0], settle: [] },
      { kind: 'calls', server: 0, route: 0, times: 1, upperCase: true },
    ]);
  });

  test('a removed server whose claims are being settled keeps its budget past the window, and loses it once settled and quiet', async () => {
    await play([
      { kind: 'reload', configured: [1], settle: [] },
      { kind: 'calls', server: 1, route: 1, times: 2, upperCase: false },
      { kind: 'reload', configured: [], settle: [1] },
      { kind: 'advance', ms: 2 * SETTINGS.windowMs },
      { kind: 'settled', server: 1 },
    ]);
  });
});
