/** What the delivery loop needs from the Seller API, per server, budget already applied. */
export type Route = 'pull' | 'done' | 'fail';

export type PullResult =
  /** A claimed command. `id` keeps the exact int64 digits; `command` is whatever the API sent. */
  | { readonly kind: 'claimed'; readonly id: string; readonly command: unknown }
  /** 204, empty body, null, {} or no id: nothing to run now. */
  | { readonly kind: 'empty'; readonly status: number }
  /**
   * A claim whose answer was too big to keep: porter knows its id, not its command. It is not run;
   * `reason` (its size and the limit) is reported as the failure.
   */
  | { readonly kind: 'oversized'; readonly id: string; readonly reason: string }
  /** A 200 whose body carried an id porter cannot use in a report path. */
  | { readonly kind: 'unusable'; readonly reason: string };

/** 404/409: the platform already settled the command (or no longer has it); `apiCode` is its problem code, if any. */
export interface AlreadySettled {
  readonly kind: 'alreadySettled';
  readonly status: number;
  readonly apiCode: string | undefined;
}

export type ReportResult = 'accepted' | AlreadySettled;

export interface ServerApi {
  readonly serverId: string;
  /**
   * Waits for budget and a connection (abortable), then pulls. Throws typed errors from
   * src/api/errors.ts. `beforeSend` runs after every wait, right before the pull is written; what it
   * throws withholds the pull (nothing sent, nothing claimed) and is thrown here.
   */
  pull(onlineIdentifiers: readonly string[], signal?: AbortSignal, beforeSend?: () => void): Promise<PullResult>;
  done(id: string, signal?: AbortSignal): Promise<ReportResult>;
  fail(id: string, reason: string, signal?: AbortSignal): Promise<ReportResult>;
}
