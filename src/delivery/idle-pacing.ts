import type { RouteBudgetSnapshot } from '../budget.js';

/**
 * How long to wait before the next pull after one that found nothing due.
 *
 * A fixed `poll.idleMs` makes a fresh purchase wait idleMs/2 on average. When the pull budget of
 * the current window has calls to spare, spreading them evenly over the rest of the window polls
 * more often without ever running the window dry: the spread keeps pace with the clock, and a
 * reserve of the window's cap is never spent on idling, so a purchase that lands late in a window
 * still finds budget to be claimed at once. A backlog is unaffected: it pulls back-to-back and only
 * the budget itself paces it.
 *
 * Bounds: never slower than `idleMs` (the owner's setting stays the worst case), never faster than
 * a quarter of it (or 100 ms), so a generous budget does not turn idling into a busy loop.
 */
export const IDLE_RESERVE_FRACTION = 0.25;

export function idleDelay(pull: RouteBudgetSnapshot, now: number, idleMs: number): number {
  const floor = Math.max(100, Math.floor(idleMs / 4));
  if (pull.windowEndsAt === undefined) return idleMs;
  const spare = pull.remaining - Math.ceil(pull.cap * IDLE_RESERVE_FRACTION);
  if (spare <= 0) return idleMs;
  const windowLeft = Math.max(0, pull.windowEndsAt - now);
  return Math.min(idleMs, Math.max(floor, Math.ceil(windowLeft / spare)));
}
