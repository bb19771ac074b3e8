import fc from 'fast-check';

/**
 * What one run of the lifecycle test plays (test/lifecycle/lifecycle.test.ts): the world porter
 * starts in and a timed list of everything porter can meet while it runs. Generated from one seed,
 * so a failing run is replayed by its seed alone. Servers and stores are named by index into the
 * world's current lists (taken modulo their length when the event is played), so any event fits
 * any world, whatever the reloads before it changed.
 */

export interface StoreShape {
  /** Which Seller API (origin) it lives at. */
  readonly origin: number;
  readonly servers: number;
}

export interface Shape {
  readonly origins: number;
  /** The first is the default store (`api`), the others named ones. */
  readonly stores: readonly StoreShape[];
  /** The GameServer's state at start; undefined: porter is not inside Agones. */
  readonly agones: AgonesState | undefined;
  readonly webhook: boolean;
  readonly budget: { readonly perWindow: number; readonly windowMs: number };
  readonly drainMs: number;
  readonly apiTimeoutMs: number;
  /** How long the game servers take to answer a login when porter first starts (a world loading). */
  readonly loginDelayMs: number;
  /** How long the schedule runs, from porter's first start. */
  readonly durationMs: number;
}

export const AGONES_STATES = ['Scheduled', 'RequestReady', 'Ready', 'Allocated', 'Reserved', 'Unhealthy'] as const;
export type AgonesState = (typeof AGONES_STATES)[number];

export type Change =
  | { readonly kind: 'add-server'; readonly store: number }
  | { readonly kind: 'remove-server'; readonly server: number }
  | { readonly kind: 'move-server'; readonly server: number; readonly store: number }
  | { readonly kind: 'add-store'; readonly origin: number; readonly servers: number }
  | { readonly kind: 'remove-store'; readonly store: number }
  /** Servers that come and go: `count` servers (the longest configured first) replaced by as many with new ids. */
  | { readonly kind: 'replace-servers'; readonly count: number };

export type LifecycleEvent =
  | { readonly kind: 'purchase'; readonly server: number; readonly slowMs: number }
  /** Several purchases on one server at once: a backlog, so its loop waits on the pull budget. */
  | { readonly kind: 'burst'; readonly server: number; readonly count: number }
  /**
   * A reload that removes a server while it runs a slow command whose report its store refuses
   * for a while (503): the command in hand cannot be reported within the drain.
   */
  | { readonly kind: 'remove-busy'; readonly server: number; readonly failForMs: number }
  /**
   * A backlog on one server, and the GameServer leaving the states that allow claims while its loop
   * waits for the pull budget (back to Ready `forMs` later); without Agones, the backlog alone.
   */
  | { readonly kind: 'held-backlog'; readonly server: number; readonly state: AgonesState; readonly forMs: number }
  /** SIGTERM (a second one `secondAfterMs` later when set); porter is started again once it exited. */
  | { readonly kind: 'stop'; readonly secondAfterMs: number | undefined }
  | { readonly kind: 'reload'; readonly change: Change | undefined }
  /** Servers that come and go all day: `reloads` reloads `everyMs` apart, each replacing `replace` servers with new ids. */
  | { readonly kind: 'churn'; readonly reloads: number; readonly replace: number; readonly everyMs: number }
  | { readonly kind: 'revoke'; readonly store: number }
  | { readonly kind: 'restore'; readonly store: number }
  | { readonly kind: 'store-slow'; readonly store: number; readonly delayMs: number; readonly forMs: number }
  | { readonly kind: 'store-failing'; readonly store: number; readonly fault: '503' | 'reset'; readonly forMs: number }
  | { readonly kind: 'api-fault'; readonly server: number; readonly route: 'pull' | 'done' | 'fail'; readonly fault: ApiFault }
  | { readonly kind: 'agones'; readonly state: AgonesState }
  | { readonly kind: 'webhook'; readonly store: number }
  | { readonly kind: 'flood'; readonly store: number; readonly forMs: number }
  | { readonly kind: 'game-down'; readonly game: number; readonly forMs: number }
  | { readonly kind: 'game-slow'; readonly game: number; readonly ms: number; readonly forMs: number };

export type ApiFault = '503' | 'reset' | 'claim-then-reset';

export interface Timed {
  readonly at: number;
  readonly event: LifecycleEvent;
}

export interface Schedule {
  readonly seed: number;
  readonly shape: Shape;
  /** In the order they are played. */
  readonly events: readonly Timed[];
}

const index = fc.nat({ max: 1000 });

/** A host's big store beside a small one on the same API: what starves the small one if anything does. */
const bigShape = fc.record({
  origins: fc.constant(1),
  stores: fc.constant<StoreShape[]>([
    { origin: 0, servers: 36 },
    { origin: 0, servers: 2 },
  ]),
});

const smallShape = fc.integer({ min: 1, max: 2 }).chain((origins) =>
  fc.record({
    origins: fc.constant(origins),
    stores: fc.array(fc.record({ origin: fc.nat({ max: origins - 1 }), servers: fc.integer({ min: 1, max: 3 }) }), {
      minLength: 1,
      maxLength: 3,
    }),
  }),
);

const shape: fc.Arbitrary<Shape> = fc
  .tuple(
    fc.oneof({ weight: 2, arbitrary: bigShape }, { weight: 3, arbitrary: smallShape }),
    fc.record({
      agones: fc.option(fc.constantFrom<AgonesState>('Ready', 'Ready', 'Scheduled', 'Allocated'), { nil: undefined, freq: 3 }),
      webhook: fc.constantFrom(true, true, true, false, false),
      budget: fc.constantFrom(
        { perWindow: 4, windowMs: 4_000 },
        { perWindow: 6, windowMs: 5_000 },
        { perWindow: 6, windowMs: 5_000 },
        { perWindow: 120, windowMs: 60_000 },
      ),
      drainMs: fc.constantFrom(2_000, 3_000),
      apiTimeoutMs: fc.constant(3_000),
      loginDelayMs: fc.constantFrom(0, 0, 1_500, 3_000),
      durationMs: fc.integer({ min: 6_000, max: 9_000 }),
    }),
  )
  .map(([stores, rest]) => ({ ...stores, ...rest }));

const change: fc.Arbitrary<Change> = fc.oneof(
  fc.record({ kind: fc.constant('add-server' as const), store: index }),
  fc.record({ kind: fc.constant('remove-server' as const), server: index }),
  fc.record({ kind: fc.constant('move-server' as const), server: index, store: index }),
  fc.record({ kind: fc.constant('add-store' as const), origin: index, servers: fc.integer({ min: 1, max: 2 }) }),
  fc.record({ kind: fc.constant('remove-store' as const), store: index }),
);

const forMs = fc.integer({ min: 500, max: 4_000 });

const event: fc.Arbitrary<LifecycleEvent> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('stop' as const),
      secondAfterMs: fc.option(fc.integer({ min: 50, max: 1_500 }), { nil: undefined, freq: 4 }),
    }),
  },
  { weight: 5, arbitrary: fc.record({ kind: fc.constant('reload' as const), change: fc.option(change, { nil: undefined, freq: 6 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('revoke' as const), store: index }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('restore' as const), store: index }) },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('store-slow' as const),
      store: index,
      delayMs: fc.constantFrom(1_000, 2_500, 6_000, 6_000),
      forMs,
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('store-failing' as const),
      store: index,
      fault: fc.constantFrom('503' as const, 'reset' as const),
      forMs,
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('api-fault' as const),
      server: index,
      route: fc.constantFrom('pull' as const, 'done' as const, 'fail' as const),
      fault: fc.constantFrom<ApiFault>('503', 'reset', 'claim-then-reset'),
    }),
  },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('agones' as const), state: fc.constantFrom(...AGONES_STATES) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('burst' as const), server: index, count: fc.integer({ min: 4, max: 10 }) }) },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant('remove-busy' as const), server: index, failForMs: fc.integer({ min: 2_500, max: 6_000 }) }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('held-backlog' as const),
      server: index,
      state: fc.constantFrom<AgonesState>('RequestReady', 'Unhealthy', 'Scheduled'),
      // Longer than the budget's window: the loop waits for the budget while the gate is shut.
      forMs: fc.integer({ min: 5_500, max: 8_000 }),
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('webhook' as const), store: index }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('flood' as const), store: index, forMs: fc.integer({ min: 1_500, max: 3_000 }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('game-down' as const), game: index, forMs }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('game-slow' as const), game: index, ms: fc.constantFrom(300, 1_500), forMs }) },
);

const churn: fc.Arbitrary<LifecycleEvent> = fc.record({
  kind: fc.constant('churn' as const),
  reloads: fc.integer({ min: 3, max: 8 }),
  replace: fc.integer({ min: 1, max: 3 }),
  everyMs: fc.integer({ min: 100, max: 700 }),
});

const purchase: fc.Arbitrary<LifecycleEvent> = fc.record({
  kind: fc.constant('purchase' as const),
  server: index,
  slowMs: fc.constantFrom(0, 0, 0, 400, 1_500, 3_000),
});

/** Stops cluster where seams are: a third of them in the first second and a half (start-up and logins). */
const when = (durationMs: number) => fc.oneof(fc.integer({ min: 0, max: 1_500 }), fc.integer({ min: 0, max: durationMs }));

const schedule = shape.chain((s) =>
  fc
    .tuple(
      fc.array(fc.tuple(when(s.durationMs), event), { minLength: 6, maxLength: 16 }),
      fc.array(fc.tuple(fc.integer({ min: 0, max: s.durationMs }), purchase), { minLength: 8, maxLength: 40 }),
      // Drawn last, so the events and purchases of a seed are those it had before churn existed.
      fc.option(fc.tuple(fc.integer({ min: 0, max: s.durationMs }), churn), { freq: 3, nil: undefined }),
    )
    .map(([events, purchases, churned]) => ({
      shape: s,
      events: [...events, ...purchases, ...(churned ? [churned] : [])]
        .map(([at, e]) => ({ at, event: e }))
        .sort((a, b) => a.at - b.at || kindOrder(a.event) - kindOrder(b.event)),
    })),
);

function kindOrder(e: LifecycleEvent): number {
  return e.kind === 'purchase' ? 0 : 1;
}

/** The schedule of one seed; the same seed always gives the same schedule. */
export function scheduleFor(seed: number): Schedule {
  const [generated] = fc.sample(schedule, { seed, numRuns: 1 });
  return { seed, ...generated! };
}
