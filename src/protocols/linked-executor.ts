import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import { NotSentError } from '../errors.js';
import { DEFAULT_RECONNECT_BACKOFF, type BackoffPolicy } from '../net/backoff.js';
import { ReconnectingLink, type LinkTransport, type LinkWording } from '../net/reconnecting-link.js';
import { SerialLane } from '../serial-lane.js';
import type { ExecutionContext, ExecutorStats } from './executor.js';

/** What every executor on a reconnecting link is given. */
export interface LinkedExecutorDeps {
  readonly logger: Logger;
  readonly clock?: Clock;
  /** Reconnect backoff; each executor names its default. */
  readonly backoff?: BackoffPolicy;
  /** For tests of the jitter; Math.random otherwise. */
  readonly random?: () => number;
}

/** The reconnecting link of an executor, with the backoff and jitter its deps give or the defaults. */
export function executorLink<Conn>(
  transport: LinkTransport<Conn>,
  wording: LinkWording,
  parts: { readonly deps: LinkedExecutorDeps; readonly logger: Logger; readonly clock: Clock; readonly backoff?: BackoffPolicy },
): ReconnectingLink<Conn> {
  return new ReconnectingLink<Conn>({
    transport,
    wording,
    backoff: parts.deps.backoff ?? parts.backoff ?? DEFAULT_RECONNECT_BACKOFF,
    logger: parts.logger,
    clock: parts.clock,
    random: parts.deps.random ?? Math.random,
  });
}

/** How an executor says, in its own terms, why a request was not sent. */
interface NotSentWords {
  /** The link has no open connection (a reconnect is under way). */
  readonly notConnected: string;
  /** The signal aborted while the request waited for its turn. */
  readonly cancelledWaiting: string;
}

/**
 * What an executor is by its reconnecting link alone: readiness, stats, the first connect and
 * waiting for one, one request at a time on the open connection, and closing. Every executor
 * that holds a connection (RCON, WebRCON, telnet, BattlEye, TShock) extends it and adds how a
 * command travels.
 */
export abstract class LinkedExecutor<Conn, Config> {
  protected abstract readonly link: ReconnectingLink<Conn>;
  /** The executor's logger: it names the server, the executor and the game server's `address`. */
  protected abstract readonly logger: Logger;
  /** The transport in the command.sending line's words: "sending command over <over>". */
  protected abstract readonly over: string;
  /** The server's executor configuration (host, port, password, deadlines). */
  protected readonly config: Config;
  /** One request at a time, for the executors whose connection carries one. */
  protected readonly lane = new SerialLane();

  constructor(config: Config) {
    this.config = config;
  }

  isReady(): boolean {
    return this.link.isReady();
  }

  /** Runs a delivery command: one command.sending line (never the text at this level), then the transport's own way. */
  execute(command: string, context: ExecutionContext, signal?: AbortSignal): Promise<string> {
    // Asked first: the line's object and words would be built for every command at info level too.
    if (this.logger.isLevelEnabled('debug')) {
      this.logger.debug({ event: 'command.sending', id: context.id }, `sending command over ${this.over}`);
    }
    return this.sendCommand(command, signal);
  }

  /** How a delivery command travels and what it answers; the transport's refusals (CommandRefusedError) come first. */
  protected abstract sendCommand(command: string, signal?: AbortSignal): Promise<string>;

  stats(): ExecutorStats {
    return { connected: this.isReady(), reconnects: this.link.reconnects };
  }

  /**
   * One connection attempt now (or joins the one under way). Rejects with CredentialsError when
   * the server refuses the password or token, the protocol's connect error otherwise; does not
   * retry (waitReady does).
   */
  connect(signal?: AbortSignal): Promise<void> {
    return this.link.connect(signal);
  }

  /** Resolves once connected, reconnecting with backoff meanwhile; rejects on abort, close or refused credentials. */
  waitReady(signal?: AbortSignal): Promise<void> {
    return this.link.waitReady(signal);
  }

  /** Stops reconnecting, drops the connection and settles every waiter; leaves no timers behind. */
  async close(): Promise<void> {
    if (this.link.closed) return;
    await Promise.allSettled([this.link.close(), this.lane.idle()]);
    await this.closed();
  }

  /** What the executor holds besides its link (an HTTP agent), released once the link is closed. */
  protected closed(): Promise<void> {
    return Promise.resolve();
  }

  /**
   * The link's connection when it is open. Otherwise NotSentError, and the link reconnects (the
   * delivery loop decides whether to wait).
   */
  protected openConnection(notConnected: string): Conn {
    this.link.throwIfUnusable();
    const connection = this.link.connection;
    if (connection === undefined || !this.link.isReady()) {
      this.link.ensureReconnecting();
      throw new NotSentError(notConnected);
    }
    return connection;
  }

  /**
   * Runs `send` on the open connection once the lane gives this request its turn. NotSentError
   * while not connected, or when the signal aborts before the turn came; once `send` started, its
   * own outcome.
   */
  protected async inTurn<T>(words: NotSentWords, signal: AbortSignal | undefined, send: (connection: Conn) => Promise<T>): Promise<T> {
    this.link.throwIfUnusable();
    let started = false;
    try {
      return await this.lane.run(async () => {
        started = true;
        return await send(this.openConnection(words.notConnected));
      }, signal);
    } catch (error) {
      if (started) throw error;
      throw new NotSentError(words.cancelledWaiting, { cause: signal?.reason });
    }
  }
}
