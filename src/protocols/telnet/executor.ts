import type { Logger } from 'pino';
import { systemClock, type Clock } from '../../clock.js';
import type { ResolvedExecutor } from '../../config/schema.js';
import { CommandRefusedError, NotSentError } from '../../errors.js';
import { DEFAULT_RECONNECT_BACKOFF, type BackoffPolicy } from '../../net/backoff.js';
import { ReconnectingLink } from '../../net/reconnecting-link.js';
import { SerialLane } from '../../serial-lane.js';
import { assertSingleLine, type ExecutionContext, type Executor } from '../executor.js';
import { LinkedExecutor } from '../linked-executor.js';
import { TelnetConnection } from './connection.js';
import { endsSession } from './console-text.js';
import { TelnetConnectError } from './errors.js';

export { TelnetConnectError } from './errors.js';

export type TelnetExecutorConfig = Extract<ResolvedExecutor, { type: 'telnet' }>;

export interface TelnetExecutorDeps {
  readonly logger: Logger;
  readonly clock?: Clock;
  /** Reconnect backoff; 250 ms doubling to 10 s by default. */
  readonly backoff?: BackoffPolicy;
  /** For tests of the jitter; Math.random otherwise. */
  readonly random?: () => number;
}

/**
 * 7 Days to Die's telnet console: one persistent, logged-in TCP connection per server, one
 * command in flight on it (the answers carry nothing that says which command they belong to),
 * each framed by an end marker (docs/design.md#executors). Reconnects in the background with
 * backoff; a rejected password stops that for good, because retrying cannot fix it and the
 * console blocks an address after TelnetFailedLoginLimit failures.
 */
export class TelnetExecutor extends LinkedExecutor<TelnetConnection> implements Executor {
  readonly connectedText: string;
  readonly #config: TelnetExecutorConfig;
  readonly #logger: Logger;
  readonly #lane = new SerialLane();
  protected readonly link: ReconnectingLink<TelnetConnection>;

  constructor(config: TelnetExecutorConfig, deps: TelnetExecutorDeps) {
    super();
    this.#config = config;
    const address = `${config.host}:${config.port}`;
    this.connectedText = `telnet login to ${address} accepted`;
    this.#logger = deps.logger.child({ executor: 'telnet', telnet: address });
    const clock = deps.clock ?? systemClock;
    this.link = new ReconnectingLink<TelnetConnection>({
      transport: {
        open: async (signal) => {
          const connection = new TelnetConnection({
            host: config.host,
            port: config.port,
            password: config.password,
            connectTimeoutMs: config.connectTimeoutMs,
            logger: this.#logger,
            clock,
          });
          await connection.open(signal);
          return connection;
        },
        isOpen: (connection) => connection.state === 'ready',
        watch: (connection, ended) => connection.onEnd((reason) => ended(reason.message)),
        drop: (connection) => connection.destroy(),
        release: (connection) => connection.destroy(new Error('porter closed the telnet session')),
      },
      wording: {
        subject: `the telnet session to ${address}`,
        ConnectError: TelnetConnectError,
        connected: 'telnet connected and logged in',
        reconnected: 'telnet reconnected and logged in',
        lost: 'telnet connection lost; reconnecting',
        retrying: 'telnet reconnect failed; retrying with backoff',
        refused: 'telnet password rejected; not reconnecting until the configuration is fixed',
      },
      backoff: deps.backoff ?? DEFAULT_RECONNECT_BACKOFF,
      logger: this.#logger,
      clock,
      random: deps.random ?? Math.random,
    });
  }

  execute(command: string, context: ExecutionContext, signal?: AbortSignal): Promise<string> {
    this.#logger.debug({ commandId: context.id, serverId: context.serverId }, 'sending command over telnet');
    return this.#request(command, signal);
  }

  query(command: string, signal?: AbortSignal): Promise<string> {
    return this.#request(command, signal);
  }

  /** Stops reconnecting, drops the connection and settles every waiter; leaves no timers behind. */
  async close(): Promise<void> {
    if (this.link.closed) return;
    await Promise.allSettled([this.link.close(), this.#lane.idle()]);
  }

  /**
   * Refused commands (CR/LF/NUL, `exit`) reject with CommandRefusedError before anything is
   * queued; while disconnected, NotSentError at once (the delivery loop decides whether to wait).
   */
  async #request(command: string, signal?: AbortSignal): Promise<string> {
    assertSingleLine(command);
    if (endsSession(command)) {
      throw new CommandRefusedError('"exit" ends porter\'s own telnet session instead of running a command, so it was not sent');
    }
    this.link.throwIfUnusable();
    let started = false;
    try {
      return await this.#lane.run(async () => {
        started = true;
        this.link.throwIfUnusable();
        const connection = this.link.connection;
        if (!connection || connection.state !== 'ready') {
          this.link.ensureReconnecting();
          throw new NotSentError(
            `the telnet console at ${this.#config.host}:${this.#config.port} is not connected (porter is reconnecting); the command was not sent`,
          );
        }
        // A started request is cancelled by the connection, which destroys itself before the lane moves on.
        return await connection.request(command, this.#config.timeoutMs, signal);
      }, signal);
    } catch (error) {
      if (started) throw error;
      throw new NotSentError('the command was cancelled while waiting for the telnet connection; it was not sent', {
        cause: signal?.reason,
      });
    }
  }
}
