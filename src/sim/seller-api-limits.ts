/**
 * The simulated platform's rate limit (the Seller API's documented limits): per key (server + route) a fixed window
 * that starts at the first request after the previous one ended. It also remembers each key's
 * Retry-After, so a test can count requests that came too early.
 */

type LimitCheck =
  | { readonly allowed: true; readonly limit: number; readonly remaining: number }
  | { readonly allowed: false; readonly limit: number; readonly remaining: 0; readonly retryAfterSeconds: number };

interface Window {
  start: number;
  count: number;
  retryUntil: number;
}

/** The window of a server's route. */
export function windowKey(serverId: string, route: 'pull' | 'done' | 'fail'): string {
  return `${serverId}|${route}`;
}

export class FixedWindows {
  readonly #windows = new Map<string, Window>();

  constructor(
    readonly perWindow: number,
    readonly windowMs: number,
  ) {}

  #current(key: string, now: number): Window {
    let window = this.#windows.get(key);
    if (!window || now >= window.start + this.windowMs) {
      window = { start: now, count: 0, retryUntil: window?.retryUntil ?? 0 };
      this.#windows.set(key, window);
    }
    return window;
  }

  /** True when a Retry-After given for `key` has not run out at `now`. */
  isEarly(key: string, now: number): boolean {
    return now < (this.#windows.get(key)?.retryUntil ?? 0);
  }

  /** Counts one request, or refuses it with the seconds until the window ends (rounded up). */
  check(key: string, now: number): LimitCheck {
    const window = this.#current(key, now);
    if (window.count >= this.perWindow) {
      const retryAfterSeconds = Math.max(1, Math.ceil((window.start + this.windowMs - now) / 1000));
      window.retryUntil = Math.max(window.retryUntil, now + retryAfterSeconds * 1000);
      return { allowed: false, limit: this.perWindow, remaining: 0, retryAfterSeconds };
    }
    window.count++;
    return { allowed: true, limit: this.perWindow, remaining: this.perWindow - window.count };
  }

  /** Spends `n` requests as another client would (opening the window if none is running). */
  spend(key: string, n: number, now: number): void {
    const window = this.#current(key, now);
    window.count = Math.min(this.perWindow, window.count + n);
  }

  remaining(key: string, now: number): number {
    const window = this.#windows.get(key);
    if (!window || now >= window.start + this.windowMs) return this.perWindow;
    return Math.max(0, this.perWindow - window.count);
  }
}
