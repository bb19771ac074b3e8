import { untilAborted } from '../abort.js';
import { isConfigurationError, NotSentError } from '../errors.js';
import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import { JoinGrace } from './join-grace.js';
import { normalizeIdentifiers } from './normalize.js';
import { WakeSignal } from '../wake-signal.js';

interface PlayerCacheOptions {
  /** Reads the raw identifiers once (preset over RCON, or a script). */
  readonly read: (signal?: AbortSignal) => Promise<string[]>;
  /** How long a successful list is reused before it is read again. */
  readonly refreshMs: number;
  readonly clock: Clock;
  readonly logger: Logger;
  /**
   * Called with identifiers that just became sendable: new in a read (after porter's first), or,
   * with a join grace, whose grace just ended. The loop pulls then.
   */
  readonly onJoin?: (newIds: string[]) => void;
  /** players.joinGraceMs: how long a newly listed identifier is left out of `get` (default 0). */
  readonly joinGraceMs?: number;
}

/** A failed read is retried after at most this long, however long refreshMs is. */
const FAILURE_RETRY_MS = 1000;
/** At most one warning per this long for repeated read failures (and for cut lists). */
const WARN_EVERY_MS = 60_000;

/**
 * Who is online, read at most once per `refreshMs` and shared by every caller.
 *
 * A read that fails yields an empty list: commands that do not need the player online still
 * run, and the failure is logged (rate-limited) instead of stopping deliveries. Some failures
 * are passed on instead, because pulling then would claim a command that cannot run (docs/design.md#delivery-semantics):
 * the caller's own abort, NotSentError (the game server cannot be reached right now) and errors
 * whose exitCode is 78 (credentials rejected).
 */
export class PlayerCache {
  readonly #o: PlayerCacheOptions;
  #last: { ids: string[]; at: number } | undefined;
  readonly #grace: JoinGrace;
  #failedAt: number | undefined;
  #inflight: Promise<string[]> | undefined;
  /** Ends the shared read: one function for the cache's life, not a closure per read. */
  readonly #readEnded = () => {
    this.#inflight = undefined;
  };
  #watching = false;
  #failuresSinceWarn = 0;
  #lastFailureWarnAt: number | undefined;
  #lastCutWarnAt: number | undefined;

  constructor(options: PlayerCacheOptions) {
    if (!(options.refreshMs > 0)) throw new RangeError('refreshMs must be a positive number of milliseconds');
    this.#o = options;
    this.#grace = new JoinGrace(options.joinGraceMs ?? 0);
  }

  /**
   * The normalised online identifiers as a pull sends them, those still in their join grace left
   * out; reads the game server only when the cached list is stale.
   */
  async get(signal?: AbortSignal): Promise<string[]> {
    signal?.throwIfAborted();
    const fresh = this.#freshList() ?? (await this.#getRead(signal));
    return this.#grace.sendable(fresh, this.#o.clock.now());
  }

  async #getRead(signal: AbortSignal | undefined): Promise<readonly string[]> {
    try {
      return await untilAborted(this.#readShared(signal), signal);
    } catch (error) {
      if (signal?.aborted || mustPassOn(error)) throw error;
      // The shared read was aborted by the caller that started it; this caller still gets an answer.
      return [];
    }
  }

  /**
   * Reads again whenever the list goes stale, so a player who joins while the loop is idle is
   * noticed within about refreshMs (onJoin then wakes the loop), and wakes when a join grace ends,
   * so the pull that may claim for that player is not left for the loop's idle interval. Stops
   * when `signal` aborts and leaves no timer behind.
   */
  startWatching(signal: AbortSignal): void {
    if (this.#watching || signal.aborted) return;
    this.#watching = true;
    // One abort listener for the watcher's whole life, not one per sleep: a fleet's watchers
    // sleep hundreds of times a second (docs/benchmarks.md, fleet).
    const stopped = new WakeSignal();
    const onStop = () => stopped.wake();
    signal.addEventListener('abort', onStop, { once: true });
    void (async () => {
      try {
        while (!signal.aborted) {
          // Not through get(): the read takes the same signal, so it cannot outlive a stop, and
          // the watcher needs no copy of the list.
          const ok = this.#freshList() !== undefined || (await this.#readShared(signal).then(succeeded, failed));
          if (signal.aborted) break;
          // A failure that was passed on (server unreachable) caches nothing: try again in a moment.
          const wait = ok ? this.#msUntilStale() : this.#failureRetryMs();
          await stopped.sleepUnlessWoken(this.#o.clock, Math.min(wait, this.#grace.msUntilNextEnd(this.#o.clock.now()) ?? wait));
          if (!signal.aborted) this.#announce(this.#grace.ended(this.#o.clock.now()));
        }
      } finally {
        signal.removeEventListener('abort', onStop);
        this.#watching = false;
      }
    })();
  }

  /** The read in flight, started by this caller if none is. */
  #readShared(signal: AbortSignal | undefined): Promise<string[]> {
    this.#inflight ??= this.#read(signal).finally(this.#readEnded);
    return this.#inflight;
  }

  #freshList(): string[] | undefined {
    const now = this.#o.clock.now();
    if (this.#failedAt !== undefined && now - this.#failedAt < this.#failureRetryMs()) return [];
    if (this.#last && now - this.#last.at < this.#o.refreshMs) return this.#last.ids;
    return undefined;
  }

  #msUntilStale(): number {
    const now = this.#o.clock.now();
    const until =
      this.#failedAt !== undefined
        ? this.#failedAt + this.#failureRetryMs()
        : this.#last
          ? this.#last.at + this.#o.refreshMs
          : now + this.#o.refreshMs;
    // Never 0: a clock that does not move must not turn the watcher into a busy loop.
    return Math.max(1, until - now);
  }

  #failureRetryMs(): number {
    return Math.min(this.#o.refreshMs, FAILURE_RETRY_MS);
  }

  async #read(signal: AbortSignal | undefined): Promise<string[]> {
    const { clock, logger } = this.#o;
    let raw: string[];
    try {
      raw = await this.#o.read(signal);
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      if (error instanceof NotSentError) this.#grace.lost();
      if (mustPassOn(error)) throw error;
      this.#failedAt = clock.now();
      this.#warnFailure(error);
      return [];
    }
    const now = clock.now();
    if (this.#failedAt !== undefined) logger.info({ event: 'players.readable' }, 'online players are readable again');
    this.#failedAt = undefined;
    this.#failuresSinceWarn = 0;
    const { ids, cut } = normalizeIdentifiers(raw);
    if (cut > 0 && (this.#lastCutWarnAt === undefined || now - this.#lastCutWarnAt >= WARN_EVERY_MS)) {
      this.#lastCutWarnAt = now;
      logger.warn(
        { event: 'players.cut', online: ids.length + cut, cut },
        'more than 4,096 players online: only the first 4,096 are sent with a pull',
      );
    }
    this.#last = { ids, at: now };
    // The first list is a baseline, not a wave of joins: the loop pulls with it anyway.
    this.#announce(this.#grace.listed(ids, now));
    return ids;
  }

  #announce(joined: string[]): void {
    if (joined.length === 0 || !this.#o.onJoin) return;
    try {
      this.#o.onJoin(joined);
    } catch (error) {
      this.#o.logger.error({ event: 'players.onjoin.failed', err: describe(error) }, 'the onJoin callback threw; ignoring it');
    }
  }

  #warnFailure(error: unknown): void {
    const now = this.#o.clock.now();
    this.#failuresSinceWarn++;
    const err = describe(error);
    if (this.#lastFailureWarnAt !== undefined && now - this.#lastFailureWarnAt < WARN_EVERY_MS) {
      this.#o.logger.debug({ event: 'players.unreadable', err }, 'could not read the online players (again)');
      return;
    }
    this.#lastFailureWarnAt = now;
    this.#o.logger.warn(
      { event: 'players.unreadable', err, failures: this.#failuresSinceWarn },
      'could not read the online players: pulling with an empty list, so only commands that do not need the player online run',
    );
    this.#failuresSinceWarn = 0;
  }
}

/** Only the message and code: the error objects of a transport may carry more than we want in a log. */
function describe(error: unknown): { message: string; code?: string } {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    return typeof code === 'string' ? { message: error.message, code } : { message: error.message };
  }
  return { message: String(error) };
}

/** The watcher's view of a read: it only needs to know whether a list came (module-level: no closures per read). */
const succeeded = () => true;
const failed = () => false;

function mustPassOn(error: unknown): boolean {
  if (error instanceof NotSentError) return true;
  return isConfigurationError(error);
}
