/**
 * The simulated platform's command queue (the Seller API's command states): SCHEDULED commands become
 * PROCESSING when pulled, and EXECUTED / FAILED when the executor reports them. One PROCESSING
 * command per server blocks further claims for that server.
 */

export type SimCommandStatus = 'SCHEDULED' | 'PROCESSING' | 'EXECUTED' | 'FAILED' | 'UNCERTAIN';

export interface EnqueueInput {
  /** Usually a string; anything JSON can carry is allowed so tests can send what a broken API would. */
  readonly command: unknown;
  /** Identifier that must be online unless `offlineExecute`; compared trimmed and lowercased. */
  readonly player?: string;
  readonly offlineExecute?: boolean;
  /** Epoch ms when the command is due; default: now. */
  readonly executeAt?: number;
}

export interface SimReport {
  readonly route: 'done' | 'fail';
  readonly at: number;
  /** What the fake answered: 200, 404 or 409. */
  readonly status: number;
  readonly error?: string;
}

export interface SimCommand {
  readonly id: string;
  readonly serverId: string;
  readonly command: unknown;
  readonly player: string | undefined;
  readonly offlineExecute: boolean;
  readonly executeAt: number;
  readonly status: SimCommandStatus;
  readonly error: string | undefined;
  readonly claimedAt: number | undefined;
  /** How many times a pull handed it out (must stay ≤ 1). */
  readonly claims: number;
  readonly doneCalls: number;
  readonly failCalls: number;
  readonly reports: readonly SimReport[];
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };
type Entry = Mutable<Omit<SimCommand, 'reports'>> & { reports: SimReport[] };

type PullOutcome =
  { readonly kind: 'claimed'; readonly id: string; readonly command: unknown } | { readonly kind: 'busy' } | { readonly kind: 'none' };

export class CommandQueue {
  readonly #entries: Entry[] = [];
  #nextId: bigint;
  #claimed = 0;

  readonly #processingTimeoutMs: number | undefined;

  constructor(idStart: bigint, processingTimeoutMs: number | undefined) {
    this.#nextId = idStart;
    this.#processingTimeoutMs = processingTimeoutMs;
  }

  enqueue(serverId: string, input: EnqueueInput, now: number): string {
    const id = (this.#nextId++).toString();
    this.#entries.push({
      id,
      serverId,
      command: input.command,
      player: input.player,
      offlineExecute: input.offlineExecute ?? true,
      executeAt: input.executeAt ?? now,
      status: 'SCHEDULED',
      error: undefined,
      claimedAt: undefined,
      claims: 0,
      doneCalls: 0,
      failCalls: 0,
      reports: [],
    });
    return id;
  }

  /** A PROCESSING command the executor never reported becomes UNCERTAIN after the timeout. */
  #expire(now: number): void {
    if (this.#processingTimeoutMs === undefined) return;
    for (const entry of this.#entries) {
      if (entry.status === 'PROCESSING' && entry.claimedAt !== undefined && now - entry.claimedAt >= this.#processingTimeoutMs) {
        entry.status = 'UNCERTAIN';
      }
    }
  }

  pull(serverId: string, online: ReadonlySet<string>, now: number): PullOutcome {
    this.#expire(now);
    const mine = this.#entries.filter((e) => e.serverId === serverId);
    if (mine.some((e) => e.status === 'PROCESSING')) return { kind: 'busy' };
    const due = mine.find(
      (e) =>
        e.status === 'SCHEDULED' &&
        e.executeAt <= now &&
        (e.offlineExecute || (e.player !== undefined && online.has(e.player.trim().toLowerCase()))),
    );
    if (!due) return { kind: 'none' };
    due.status = 'PROCESSING';
    due.claimedAt = now;
    due.claims++;
    this.#claimed++;
    return { kind: 'claimed', id: due.id, command: due.command };
  }

  /** 200 when PROCESSING moved on, 404 for an id this server does not have, 409 when not PROCESSING. */
  report(serverId: string, id: string, route: 'done' | 'fail', error: string | undefined, now: number): 200 | 404 | 409 {
    this.#expire(now);
    const entry = this.#entries.find((e) => e.id === id && e.serverId === serverId);
    if (!entry) return 404;
    if (route === 'done') entry.doneCalls++;
    else entry.failCalls++;
    const status = entry.status === 'PROCESSING' ? 200 : 409;
    if (status === 200) {
      entry.status = route === 'done' ? 'EXECUTED' : 'FAILED';
      if (route === 'fail') entry.error = error;
    }
    entry.reports.push({ route, at: now, status, ...(error === undefined ? {} : { error }) });
    return status;
  }

  list(now: number): SimCommand[] {
    this.#expire(now);
    return this.#entries.map((e) => ({ ...e, reports: [...e.reports] }));
  }

  get claimedCount(): number {
    return this.#claimed;
  }
}
