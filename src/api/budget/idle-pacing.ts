import type { RouteBudgetSnapshot } from './budget.js';

/**
 * How long to wait before the next pull after one that found nothing due.
 *
 * A fixed `poll.idleMs` makes a fresh purchase wait idleMs/2 on average. When the pull budget has
 * calls to spare, polling at a steady pace of (cap − reserve) calls per rolling window polls more
 * often without ever running the budget dry: at that pace no window ever holds more than the cap
 * less a reserve (a quarter of it), so a purchase always finds budget to be claimed at once. When
 * X-RateLimit-Remaining is what limits (another connector spends the shared budget), its spare
 * calls are spread over the time it still applies, so porter idles slower, never faster. A backlog
 * is unaffected: it pulls back-to-back and only the budget itself paces it.
 *
 * Bounds: never slower than `idleMs` (the owner's setting stays the worst case), never faster than
 * a quarter of it (or 100 ms), so a generous budget does not turn idling into a busy loop.
 *
 * With webhooks (`webhookWakes`), a new purchase wakes the loop itself, and idle polling is only
 * the safety net for a lost event: it runs at exactly `idleMs`, never faster, so its cost is
 * known (60 000 / idleMs pulls a minute) and a large `idleMs` really is cheap.
 */
const IDLE_RESERVE_FRACTION = 0.25;

export function idleDelay(pull: RouteBudgetSnapshot, now: number, idleMs: number, webhookWakes = false): number {
  if (webhookWakes) return idleMs;
  const floor = Math.max(100, Math.floor(idleMs / 4));
  if (pull.windowEndsAt === undefined) return idleMs;
  const reserve = Math.ceil(pull.cap * IDLE_RESERVE_FRACTION);
  const spare = pull.remaining - reserve;
  if (spare <= 0) return idleMs;
  const steady = Math.ceil(pull.windowMs / Math.max(1, pull.cap - reserve));
  const spread = Math.ceil(Math.max(0, pull.windowEndsAt - now) / spare);
  return Math.min(idleMs, Math.max(floor, steady, spread));
}
