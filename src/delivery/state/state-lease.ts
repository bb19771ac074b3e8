import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import type { Clock } from '../../clock.js';
import { describeHolder, formatHolder, parseHolder, renewed, type LockHolder } from './lock-holder.js';
import { readStateFileSync } from './state-file.js';
import { GateWaiters } from '../../gate-waiters.js';

/**
 * The lease's timing (docs/design.md#the-state-lock). The holder rewrites its record every
 * REFRESH_MS. A porter that cannot see the holder (another container, another host) watches the
 * record for WATCH_MS and takes it over only when it did not change at all in that time. The holder
 * claims only while its last good refresh is under CLAIM_WITHIN_MS old by its own monotonic clock,
 * so it has stopped claiming (WATCH_MS - CLAIM_WITHIN_MS = 9 s) before anyone can judge it gone,
 * whatever the clocks of two hosts say: only each side's own elapsed time is used.
 */
export const LEASE = { refreshMs: 2_000, claimWithinMs: 6_000, watchMs: 15_000 } as const;

export type LeaseTiming = { readonly [K in keyof typeof LEASE]: number };

/** Why the holder has lost the lock: another porter's record is in porter.lock, or none is. */
export type LostReason = string;

type LeaseFiles = Pick<typeof fs, 'renameSync' | 'writeFileSync' | 'unlinkSync'> & Parameters<typeof readStateFileSync>[1];

interface LeaseOptions {
  readonly path: string;
  /** The record this porter wrote when it took the lock (it carries this run's nonce). */
  readonly holder: LockHolder;
  readonly clock: Clock;
  /** The file now names another porter (or none): stop at once, touching nothing in stateDir. */
  readonly onLost: (reason: LostReason) => void;
  /** A refresh failed (a write error): claims stop until one succeeds. */
  readonly onFailed?: (error: Error) => void;
  readonly timing?: LeaseTiming;
  readonly files?: LeaseFiles;
}

/**
 * Keeps this porter's lease on the state directory fresh, and tells the delivery loops whether
 * they may claim (it is their gate: `isOpen` is asked as each pull is sent). Closed when the
 * last good refresh is too old by this process's clock, which is also what a freeze looks like
 * from inside: a thawed porter sends no pull before its record is checked and refreshed again.
 */
export class StateLease {
  readonly #o: LeaseOptions;
  readonly #timing: LeaseTiming;
  readonly #files: LeaseFiles;
  readonly #stop = new AbortController();
  #record: LockHolder;
  #refreshedAt: number;
  #lost: LostReason | undefined;
  #failing = false;
  readonly #waiters = new GateWaiters();

  constructor(options: LeaseOptions) {
    this.#o = options;
    this.#timing = options.timing ?? LEASE;
    this.#files = options.files ?? fs;
    this.#record = options.holder;
    this.#refreshedAt = options.clock.now();
  }

  /** Refreshes every refreshMs until stopped or lost. */
  start(): void {
    void this.#keep();
  }

  stop(): void {
    this.#stop.abort();
  }

  /** The record as last written: what release compares before removing the file. */
  get record(): LockHolder {
    return this.#record;
  }

  get lost(): LostReason | undefined {
    return this.#lost;
  }

  /** Whether a pull may claim now: the lock is ours and was confirmed lately, by our own clock. */
  isOpen(): boolean {
    return this.#lost === undefined && this.#o.clock.now() - this.#refreshedAt < this.#timing.claimWithinMs;
  }

  heldBecause(): string {
    return this.#lost === undefined
      ? `the state directory's lease is not confirmed (its last good refresh is over ${this.#timing.claimWithinMs / 1000} s old): claiming nothing until porter.lock is checked and refreshed again`
      : `the state directory lock is lost: ${this.#lost}`;
  }

  /** Resolves at once while open, else after the next good refresh; rejects when `signal` aborts. Never resolves once lost. */
  waitOpen(signal: AbortSignal): Promise<void> {
    if (this.isOpen()) return Promise.resolve();
    return this.#waiters.wait(signal);
  }

  /**
   * One refresh: the file must still carry this run's record (its nonce and its last counter),
   * then a new record replaces it whole (a temp file renamed over it: the name never goes away,
   * so a contender never finds it missing). Returns false once the lock is lost.
   */
  refresh(): boolean {
    if (this.#lost !== undefined) return false;
    const began = this.#o.clock.now();
    const { path } = this.#o;
    let text: string;
    try {
      text = readStateFileSync(path, this.#o.files).text;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return this.#lose(`${path} is gone (another porter may be taking it over)`);
      this.#fail(error as Error);
      return true;
    }
    const found = parseHolder(text);
    if (found === undefined || found.nonce !== this.#record.nonce || found.lease !== this.#record.lease) {
      return this.#lose(`${path} now names ${found ? describeHolder(found) : 'no porter (it was overwritten)'}`);
    }
    const next = renewed(this.#record, Date.now());
    const temp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}`;
    try {
      this.#files.writeFileSync(temp, formatHolder(next), { flag: 'wx', mode: 0o600 });
      this.#files.renameSync(temp, path);
    } catch (error) {
      try {
        this.#files.unlinkSync(temp);
      } catch {
        // never written, or already renamed
      }
      this.#fail(error as Error);
      return true;
    }
    this.#record = next;
    this.#refreshedAt = began;
    this.#failing = false;
    this.#waiters.releaseAll();
    return true;
  }

  async #keep(): Promise<void> {
    const { clock } = this.#o;
    while (!this.#stop.signal.aborted && this.#lost === undefined) {
      try {
        await clock.sleep(this.#timing.refreshMs, this.#stop.signal);
      } catch {
        return;
      }
      this.refresh();
    }
  }

  #lose(reason: LostReason): false {
    this.#lost = reason;
    this.#stop.abort();
    this.#o.onLost(reason);
    return false;
  }

  #fail(error: Error): void {
    if (!this.#failing) this.#o.onFailed?.(error);
    this.#failing = true;
  }
}
