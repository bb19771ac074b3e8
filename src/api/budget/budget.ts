import type { Clock } from '../../clock.js';
import { CallLog } from './budget-log.js';
import { ConfigError, PorterError } from '../../errors.js';
import type { Route } from '../types.js';

/**
 * Per-server, per-route call budget (docs/design.md#the-call-budget): 120 calls per 60 s window for each of
 * pull, done and fail, shared with the official connector. Pure bookkeeping over an injected
 * monotonic clock; the caller asks `delayFor`, takes, sends, and tells `observe` how the call
 * ended and what the answer's headers said.
 *
 * The hard rule: in any rolling `windowMs`, porter's own calls to a route are at most
 * floor(perWindow × share), or floor(X-RateLimit-Limit × share) when the API's limit is lower.
 * Porter's own log of calls (budget-log.ts) is the only thing that decides that, and nothing the API
 * says shortens it: headers and 429s can only add waits. Two API nodes that count separately
 * (X-RateLimit-Remaining 101, 100, 101, …) therefore cannot make porter send more.
 *
 * The platform starts a fixed window at the first request it counts, somewhere between porter's
 * send and its answer. Each call counts from its answer on, so a platform window can never hold
 * more than the cap of porter's calls, whatever the latency does.
 *
 * X-RateLimit-Remaining R in the answer at time t: the platform counted U = limit − R calls in the
 * window that holds this call, and that window ends by t + windowMs at the latest. When porter's own
 * calls can explain U (at most U of them count now, and no more than were answered since the
 * header last stopped going down, which is when a platform window last began), porter's own log is
 * already the stricter rule. When they cannot, the other connector spent the rest: porter sends at
 * most R more calls until t + windowMs. A later header that only confirms that count (R went down
 * by porter's own calls) keeps that end; any other replaces it.
 *
 * A 429 stops the route for its Retry-After (Retry-After / retryAfterSeconds, the longer), never
 * less than RETRY_AFTER_FLOOR_MS (so 0, negative or a past date cannot make a hot loop) and never
 * more than RETRY_AFTER_MAX_MS (so an absurd value cannot park the route for days). Without a
 * usable value (a date with no `Date` header to measure it by among them, see parseRetryAfter) it
 * stops the route for a whole window: the window that refused the call has ended by then.
 */

const ROUTES: readonly Route[] = ['pull', 'done', 'fail'];

/** The shortest pause after a 429, whatever Retry-After says. */
export const RETRY_AFTER_FLOOR_MS = 1_000;
/** The longest: a Retry-After beyond it is taken as this (and logged once, by server-api.ts). */
export const RETRY_AFTER_MAX_MS = 3_600_000;

/** `api.budget` of the config. */
export interface BudgetSettings {
  readonly perWindow: number;
  readonly windowMs: number;
  /** Fraction (0–1] of `perWindow` porter may spend; the rest is left to the official connector. */
  readonly share: number;
}

/** What an answer told us about a route's budget. */
interface BudgetObservation {
  /** X-RateLimit-Remaining. */
  readonly remaining?: number | undefined;
  /** X-RateLimit-Limit. */
  readonly limit?: number | undefined;
  /** From Retry-After / retryAfterSeconds on a 429. */
  readonly retryAfterMs?: number | undefined;
  /** The answer was a 429 (with or without a Retry-After). */
  readonly limited?: boolean | undefined;
}

export interface RouteBudgetSnapshot {
  /** Calls porter may send right now (its own cap, or less if the API says so). */
  readonly remaining: number;
  /** Porter's calls counted in the rolling window. */
  readonly used: number;
  /** floor(min(perWindow, X-RateLimit-Limit) × share). */
  readonly cap: number;
  /** What X-RateLimit-Remaining still allows while it shows the other connector's calls (undefined when porter's own explain it). */
  readonly apiRemaining: number | undefined;
  /**
   * When `remaining` next grows: the end of what X-RateLimit-Remaining allows when that is the
   * smaller figure, else when porter's oldest counted call leaves the rolling window.
   */
  readonly windowEndsAt: number | undefined;
  readonly blockedUntil: number | undefined;
  /** 0 when a call may go now. */
  readonly delayMs: number;
  /** The rolling window's length. */
  readonly windowMs: number;
}

/** A call was recorded that the budget did not allow: a bug in the caller, never sent. */
export class BudgetExceededError extends PorterError {
  override readonly code: string = 'E_BUDGET_EXCEEDED';
}

interface Allowance {
  left: number;
  readonly until: number;
}

interface RouteState {
  readonly log: CallLog;
  /** Last usable X-RateLimit-Limit. */
  limit: number | undefined;
  /** What X-RateLimit-Remaining allows while it shows the other connector's calls. */
  allowance: Allowance | undefined;
  /** Last X-RateLimit-Remaining, to notice a platform window beginning (it stops going down). */
  lastRemaining: number | undefined;
  /** Porter's calls answered since a platform window last began (unknown: infinite). */
  sinceWindowBegan: number;
  blockedUntil: number;
}

function usable(value: number | undefined): number | undefined {
  return value !== undefined && Number.isFinite(value) && value >= 0 ? Math.floor(value) : undefined;
}

/** How long a 429 stops the route. */
function pauseAfter429(retryAfterMs: number | undefined, windowMs: number): number {
  const asked = retryAfterMs === undefined || Number.isNaN(retryAfterMs) ? windowMs : Math.ceil(retryAfterMs);
  return Math.min(RETRY_AFTER_MAX_MS, Math.max(RETRY_AFTER_FLOOR_MS, asked));
}

export class Budget {
  readonly #settings: BudgetSettings;
  readonly #clock: Clock;
  readonly #routes = new Map<Route, RouteState>();

  constructor(settings: BudgetSettings, clock: Clock) {
    const { perWindow, windowMs, share } = settings;
    if (!(windowMs > 0) || !Number.isFinite(windowMs))
      throw new ConfigError(`api.budget.windowMs must be a positive number of ms, got ${windowMs}`);
    if (!(Math.floor(perWindow * share) >= 1)) {
      throw new ConfigError(
        `api.budget: perWindow (${perWindow}) × share (${share}) allows no call at all; raise share or perWindow so that their product is at least 1`,
      );
    }
    this.#settings = { perWindow, windowMs, share };
    this.#clock = clock;
    for (const route of ROUTES) {
      this.#routes.set(route, {
        log: new CallLog(windowMs, Math.floor(perWindow * share)),
        limit: undefined,
        allowance: undefined,
        lastRemaining: undefined,
        sinceWindowBegan: Number.POSITIVE_INFINITY,
        blockedUntil: 0,
      });
    }
  }

  #state(route: Route): RouteState {
    const state = this.#routes.get(route);
    if (!state) throw new TypeError(`unknown budget route "${String(route)}"`);
    return state;
  }

  #cap(state: RouteState): number {
    const perWindow =
      state.limit !== undefined && state.limit > 0 ? Math.min(this.#settings.perWindow, state.limit) : this.#settings.perWindow;
    return Math.max(1, Math.floor(perWindow * this.#settings.share));
  }

  /** The allowance from X-RateLimit-Remaining, while it runs. */
  #allowance(state: RouteState, now: number): Allowance | undefined {
    if (state.allowance && now >= state.allowance.until) state.allowance = undefined;
    return state.allowance;
  }

  /** 0 when a call to `route` may be sent now, else whole ms (at least 1) to wait before asking again. */
  delayFor(route: Route): number {
    const state = this.#state(route);
    const now = this.#clock.now();
    let until = Math.max(now, state.blockedUntil, state.log.freeAt(now, this.#cap(state)));
    const allowance = this.#allowance(state, now);
    if (allowance && allowance.left <= 0) until = Math.max(until, allowance.until);
    return until > now ? Math.ceil(until - now) : 0;
  }

  /** Records a send. Call it right before the request goes out, only when `delayFor` is 0. */
  take(route: Route): void {
    if (this.tryTake(route)) return;
    throw new BudgetExceededError(
      `a ${route} call was about to be sent ${this.delayFor(route)} ms before the budget allows it; it was not sent (a bug in porter: please report it)`,
    );
  }

  /**
   * Records a send when the budget allows one now (true), else records nothing (false). One
   * question of the call log instead of delayFor's and take's two: every idle pull asks it.
   */
  tryTake(route: Route): boolean {
    if (this.delayFor(route) > 0) return false;
    const state = this.#state(route);
    const now = this.#clock.now();
    state.log.send(now);
    const allowance = this.#allowance(state, now);
    if (allowance) allowance.left--;
    return true;
  }

  /**
   * The call to `route` taken last never left porter (withheld right before the send, or abandoned
   * while it waited for a connection): it gives back what `take` counted. Only for a call known
   * not to have been written; one that may have been is `observe`d.
   */
  withdraw(route: Route): void {
    const state = this.#state(route);
    state.log.withdraw();
    const allowance = this.#allowance(state, this.#clock.now());
    if (allowance) allowance.left++;
  }

  /** The last call to `route` ended now: answered (with what its headers said) or not (pass `{}`). */
  observe(route: Route, observation: BudgetObservation): void {
    const state = this.#state(route);
    const now = this.#clock.now();
    const answered = state.log.end(now) !== undefined;
    const limit = usable(observation.limit);
    if (limit !== undefined && limit > 0) state.limit = limit;

    if (observation.limited) {
      state.blockedUntil = Math.max(state.blockedUntil, now + pauseAfter429(observation.retryAfterMs, this.#settings.windowMs));
      // The platform's window is full: the next header that is not lower shows a new one began.
      state.lastRemaining = 0;
      return;
    }

    const remaining = usable(observation.remaining);
    if (remaining === undefined) {
      if (answered) state.sinceWindowBegan++;
      return;
    }
    const began = state.lastRemaining !== undefined && remaining >= state.lastRemaining;
    state.sinceWindowBegan = began ? 1 : state.sinceWindowBegan + 1;
    state.lastRemaining = remaining;

    const allowance = this.#allowance(state, now);
    if (allowance && allowance.left === remaining) return;
    const countedByPlatform = (state.limit ?? this.#settings.perWindow) - remaining;
    const ownCounted = Math.min(state.log.count(now), state.sinceWindowBegan);
    state.allowance = countedByPlatform > ownCounted ? { left: remaining, until: now + this.#settings.windowMs } : undefined;
  }

  /**
   * From when this budget holds nothing that could hold back a call: every call it recorded has
   * left the rolling window, and no 429 pause or X-RateLimit-Remaining allowance runs. From then on
   * a new budget allows what this one would (a lower X-RateLimit-Limit is learned again from the
   * first answer, as after a restart), so the fleet may drop it (docs/design.md#the-call-budget).
   */
  quietAt(): number {
    let quiet = Number.NEGATIVE_INFINITY;
    for (const state of this.#routes.values()) {
      quiet = Math.max(quiet, state.log.newestEndsAt() ?? quiet, state.blockedUntil, state.allowance?.until ?? quiet);
    }
    return quiet;
  }

  /** Waits (abortably, on the clock) until `route` may be called, then records the call. */
  async acquire(route: Route, signal?: AbortSignal): Promise<void> {
    for (;;) {
      signal?.throwIfAborted();
      if (this.tryTake(route)) return;
      await this.#clock.sleep(this.delayFor(route), signal);
    }
  }

  snapshot(): Record<Route, RouteBudgetSnapshot> {
    const entries = ROUTES.map((route) => [route, this.routeSnapshot(route)] as const);
    return Object.fromEntries(entries) as Record<Route, RouteBudgetSnapshot>;
  }

  /** One route's snapshot: the idle pacing asks for the pull route's after every empty pull. */
  routeSnapshot(route: Route): RouteBudgetSnapshot {
    const now = this.#clock.now();
    const state = this.#state(route);
    const cap = this.#cap(state);
    const used = state.log.count(now);
    const own = Math.max(0, cap - used);
    const allowance = this.#allowance(state, now);
    const apiBinds = allowance !== undefined && allowance.left <= own;
    return {
      remaining: apiBinds ? Math.max(0, allowance.left) : own,
      used,
      cap,
      apiRemaining: allowance ? Math.max(0, allowance.left) : undefined,
      windowEndsAt: apiBinds ? allowance.until : state.log.oldestEndsAt(now),
      blockedUntil: state.blockedUntil > now ? state.blockedUntil : undefined,
      delayMs: this.delayFor(route),
      windowMs: this.#settings.windowMs,
    };
  }
}
