import type { Clock } from './clock.js';
import { ConfigError } from './errors.js';
import type { Route } from './api/types.js';

/**
 * Per-server, per-route call budget (DESIGN §1, Budget): 120 calls per fixed 60 s window for each
 * of pull, done and fail, shared with the official connector. Pure bookkeeping over an injected
 * clock; the caller asks `delayFor`, sends, and tells `observe` what the answer's headers said.
 *
 * It assumes at most one call in flight per route (server-api.ts serialises them), which is what
 * makes "the answer to my last call" unambiguous.
 *
 * Window: the platform starts its window at the first request it receives, somewhere between our
 * send and our answer. Porter opens its window at its first call and moves the start to that call's
 * answer: ending late is the safe side, ending early could squeeze two windows' worth of calls into
 * one of the platform's. No header says when the platform's window ends, so when
 * X-RateLimit-Remaining goes up a new platform window has begun: porter re-anchors there.
 */

export const ROUTES: readonly Route[] = ['pull', 'done', 'fail'];

/** `api.budget` of the config. */
export interface BudgetSettings {
  readonly perWindow: number;
  readonly windowMs: number;
  /** Fraction (0–1] of `perWindow` porter may spend; the rest is left to the official connector. */
  readonly share: number;
}

/** What an answer told us about a route's budget. */
export interface BudgetObservation {
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
  /** Calls porter may still send in the current window (its own cap, or less if the API says so). */
  readonly remaining: number;
  /** Porter's calls counted in the current window. */
  readonly used: number;
  /** floor(min(perWindow, X-RateLimit-Limit) × share). */
  readonly cap: number;
  /** Last X-RateLimit-Remaining seen in this window, minus porter's calls since. */
  readonly apiRemaining: number | undefined;
  readonly windowEndsAt: number | undefined;
  readonly blockedUntil: number | undefined;
  /** 0 when a call may go now. */
  readonly delayMs: number;
}

interface RouteState {
  windowStart: number | undefined;
  /** False until the first answer of the window moved `windowStart` to it. */
  anchored: boolean;
  used: number;
  /** What the API allows from here on in this window; undefined until an answer said so. */
  apiLeft: number | undefined;
  /** Last X-RateLimit-Remaining seen in this window, to notice when it goes up. */
  lastRemaining: number | undefined;
  limit: number | undefined;
  blockedUntil: number;
}

function finiteNonNegative(value: number | undefined): number | undefined {
  return value !== undefined && Number.isFinite(value) && value >= 0 ? value : undefined;
}

export class Budget {
  readonly #options: BudgetSettings & { readonly clock: Clock };
  readonly #routes = new Map<Route, RouteState>();

  constructor(settings: BudgetSettings, clock: Clock) {
    const options = { perWindow: settings.perWindow, windowMs: settings.windowMs, share: settings.share, clock };
    if (!(options.windowMs > 0)) throw new ConfigError(`api.budget.windowMs must be positive, got ${options.windowMs}`);
    if (Math.floor(options.perWindow * options.share) < 1) {
      throw new ConfigError(
        `api.budget: perWindow (${options.perWindow}) × share (${options.share}) allows no call at all; raise share or perWindow so that their product is at least 1`,
      );
    }
    this.#options = options;
    for (const route of ROUTES) {
      this.#routes.set(route, {
        windowStart: undefined,
        anchored: false,
        used: 0,
        apiLeft: undefined,
        lastRemaining: undefined,
        limit: undefined,
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
    const perWindow = state.limit !== undefined && state.limit > 0 ? Math.min(this.#options.perWindow, state.limit) : this.#options.perWindow;
    return Math.max(1, Math.floor(perWindow * this.#options.share));
  }

  #windowOpen(state: RouteState, now: number): boolean {
    return state.windowStart !== undefined && now < state.windowStart + this.#options.windowMs;
  }

  /** Calls still allowed in the current window (a closed window allows the full cap). */
  #left(state: RouteState, now: number): number {
    if (!this.#windowOpen(state, now)) return this.#cap(state);
    const own = this.#cap(state) - state.used;
    return Math.max(0, state.apiLeft === undefined ? own : Math.min(own, state.apiLeft));
  }

  /** 0 when a call to `route` may be sent now, else whole ms to wait before asking again. */
  delayFor(route: Route): number {
    const state = this.#state(route);
    const now = this.#options.clock.now();
    if (now < state.blockedUntil) return Math.ceil(state.blockedUntil - now);
    if (this.#left(state, now) > 0) return 0;
    return Math.max(1, Math.ceil(state.windowStart! + this.#options.windowMs - now));
  }

  /** Records a send. Call it right before the request goes out, only when `delayFor` is 0. */
  take(route: Route): void {
    const state = this.#state(route);
    const now = this.#options.clock.now();
    if (!this.#windowOpen(state, now)) {
      state.windowStart = now;
      state.anchored = false;
      state.used = 0;
      state.apiLeft = undefined;
      state.lastRemaining = undefined;
    }
    state.used++;
    if (state.apiLeft !== undefined) state.apiLeft = Math.max(0, state.apiLeft - 1);
  }

  /** Feeds what an answer to `route` said: rate-limit headers, and Retry-After on a 429. */
  observe(route: Route, observation: BudgetObservation): void {
    const state = this.#state(route);
    const now = this.#options.clock.now();
    const remaining = finiteNonNegative(observation.remaining);
    const limit = finiteNonNegative(observation.limit);
    const retryAfterMs = finiteNonNegative(observation.retryAfterMs);
    if (limit !== undefined && limit > 0) state.limit = limit;

    if (state.windowStart === undefined) {
      // An answer without a take (should not happen): open the window here so the numbers apply.
      state.windowStart = now;
      state.used = 1;
    }
    if (!state.anchored) {
      state.windowStart = now;
      state.anchored = true;
    }

    if (remaining !== undefined) {
      if (state.lastRemaining !== undefined && remaining > state.lastRemaining) {
        // More left than before: the platform began a new window, which counted this call.
        state.windowStart = now;
        state.used = 1;
      }
      state.lastRemaining = remaining;
      state.apiLeft = remaining;
    }

    if (observation.limited || retryAfterMs !== undefined) {
      // A 429 means nothing is left, whatever the header said.
      state.lastRemaining = 0;
      if (retryAfterMs !== undefined) {
        state.blockedUntil = Math.max(state.blockedUntil, now + Math.ceil(retryAfterMs));
        // Retry-After runs to the end of the platform's window: end porter's there too, so the
        // first call after it opens a fresh window whose answer tells the rest.
        state.apiLeft = 0;
        state.windowStart = state.blockedUntil - this.#options.windowMs;
      } else {
        // No hint when it ends: wait for porter's window to end, a full window if it already has.
        state.apiLeft = 0;
        const end = state.windowStart + this.#options.windowMs;
        if (end <= now) state.blockedUntil = Math.max(state.blockedUntil, now + this.#options.windowMs);
      }
    }
  }

  /** Waits (abortably, on the clock) until `route` may be called, then records the call. */
  async acquire(route: Route, signal?: AbortSignal): Promise<void> {
    for (;;) {
      signal?.throwIfAborted();
      const delay = this.delayFor(route);
      if (delay === 0) {
        this.take(route);
        return;
      }
      await this.#options.clock.sleep(delay, signal);
    }
  }

  snapshot(): Record<Route, RouteBudgetSnapshot> {
    const now = this.#options.clock.now();
    const entries = ROUTES.map((route) => {
      const state = this.#state(route);
      const open = this.#windowOpen(state, now);
      const snapshot: RouteBudgetSnapshot = {
        remaining: this.#left(state, now),
        used: open ? state.used : 0,
        cap: this.#cap(state),
        apiRemaining: open ? state.apiLeft : undefined,
        windowEndsAt: open ? state.windowStart! + this.#options.windowMs : undefined,
        blockedUntil: state.blockedUntil > now ? state.blockedUntil : undefined,
        delayMs: this.delayFor(route),
      };
      return [route, snapshot] as const;
    });
    return Object.fromEntries(entries) as Record<Route, RouteBudgetSnapshot>;
  }
}
