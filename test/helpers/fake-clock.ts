import type { Clock } from '../../src/clock.js';

interface Sleeper {
  readonly at: number;
  readonly resolve: () => void;
}

/**
 * A clock that moves only when the test says so. `sleep` resolves when `advance` passes its time,
 * so code that waits on the clock can be stepped to the millisecond. Shared by every test area so
 * that a fix to it reaches them all.
 */
export class FakeClock implements Clock {
  #now: number;
  #sleepers: Sleeper[] = [];

  constructor(start = 1_700_000_000_000) {
    this.#now = start;
  }

  now(): number {
    return this.#now;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      if (signal?.aborted) {
        reject(signal.reason);
        return;
      }
      const sleeper: Sleeper = {
        at: this.#now + Math.max(0, ms),
        resolve: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
      };
      const onAbort = () => {
        this.#sleepers = this.#sleepers.filter((s) => s !== sleeper);
        reject(signal?.reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#sleepers.push(sleeper);
    });
  }

  /** Number of pending sleeps: lets a test wait until the code under test (a background loop) is parked. */
  get sleeping(): number {
    return this.#sleepers.length;
  }

  /** When the earliest pending sleep ends; undefined when nothing sleeps. */
  get nextWakeAt(): number | undefined {
    return this.#sleepers.length === 0 ? undefined : Math.min(...this.#sleepers.map((s) => s.at));
  }

  /** Moves time forward, waking every sleeper whose time has come, in time order. */
  advance(ms: number): void {
    this.#now += ms;
    const due = this.#sleepers.filter((s) => s.at <= this.#now).sort((a, b) => a.at - b.at);
    this.#sleepers = this.#sleepers.filter((s) => s.at > this.#now);
    for (const sleeper of due) sleeper.resolve();
  }

  set(now: number): void {
    this.advance(now - this.#now);
  }
}

/** Lets pending promise callbacks run. */
export const flush = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Runs fake time until `done` holds or `boundMs` of it have passed. Between steps it lets pending
 * work run (immediates and promise callbacks: the journal's group commit, an answer being read) at
 * least five turns, and on while nothing sleeps on the clock yet, then moves the clock to the
 * earliest wake-up. `eachStep` runs once per step (a test's world acting between steps).
 */
export async function runClockUntil(clock: FakeClock, done: () => boolean, boundMs: number, eachStep?: () => void): Promise<boolean> {
  const end = clock.now() + boundMs;
  while (clock.now() < end) {
    let next: number | undefined;
    for (let turn = 0; turn < 100; turn++) {
      await flush();
      next = clock.nextWakeAt;
      if (turn >= 4 && next !== undefined) break;
    }
    eachStep?.();
    if (done()) return true;
    if (next === undefined) return done();
    clock.set(Math.max(next, clock.now()));
  }
  return done();
}
