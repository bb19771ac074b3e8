import type { Logger } from 'pino';
import { systemClock } from '../../clock.js';
import { CommandRefusedError } from '../../errors.js';
import { ReconnectingLink } from '../../net/reconnecting-link.js';
import { assertSingleLine, type Executor } from '../executor.js';
import { executorLink, LinkedExecutor, type LinkedExecutorDeps } from '../linked-executor.js';
import { tcpLinkTransport } from '../tcp-connection.js';
import { TelnetConnection } from './connection.js';
import { endsSession } from './console-text.js';
import { TelnetConnectError } from './errors.js';
import type { ResolvedOf } from '../transport-descriptor.js';
import type { telnetTransport } from './descriptor.js';

export type TelnetExecutorConfig = ResolvedOf<typeof telnetTransport>;

/** Reconnect backoff by default 250 ms doubling to 10 s (DEFAULT_RECONNECT_BACKOFF). */
type TelnetExecutorDeps = LinkedExecutorDeps;

/**
 * 7 Days to Die's telnet console: one persistent, logged-in TCP connection per server, one
 * command in flight on it (the answers carry nothing that says which command they belong to),
 * each framed by an end marker (docs/design.md#executors). Reconnects in the background with
 * backoff; a rejected password stops that for good, because retrying cannot fix it and the
 * console blocks an address after TelnetFailedLoginLimit failures.
 */
export class TelnetExecutor extends LinkedExecutor<TelnetConnection, TelnetExecutorConfig> implements Executor {
  readonly connectedText: string;
  protected readonly logger: Logger;
  protected readonly over = 'telnet';
  protected readonly link: ReconnectingLink<TelnetConnection>;

  constructor(config: TelnetExecutorConfig, deps: TelnetExecutorDeps) {
    super(config);
    const address = `${config.host}:${config.port}`;
    this.connectedText = `telnet login to ${address} accepted`;
    this.logger = deps.logger.child({ executor: 'telnet', address });
    const clock = deps.clock ?? systemClock;
    this.link = executorLink<TelnetConnection>(
      tcpLinkTransport(async (signal) => {
        const connection = new TelnetConnection({
          host: config.host,
          port: config.port,
          password: config.password,
          connectTimeoutMs: config.connectTimeoutMs,
          logger: this.logger,
          clock,
        });
        await connection.open(signal);
        return connection;
      }, 'porter closed the telnet session'),
      {
        subject: `the telnet session to ${address}`,
        ConnectError: TelnetConnectError,
        connected: 'telnet connected and logged in',
        reconnected: 'telnet reconnected and logged in',
        lost: 'telnet connection lost; reconnecting',
        retrying: 'telnet reconnect failed; retrying with backoff',
        refused: 'telnet password rejected; not reconnecting until the configuration is fixed',
      },
      { deps, logger: this.logger, clock },
    );
  }

  protected sendCommand(command: string, signal?: AbortSignal): Promise<string> {
    return this.#request(command, signal);
  }

  query(command: string, signal?: AbortSignal): Promise<string> {
    return this.#request(command, signal);
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
    const words = {
      notConnected: `the telnet console at ${this.config.host}:${this.config.port} is not connected (porter is reconnecting); the command was not sent`,
      cancelledWaiting: 'the command was cancelled while waiting for the telnet connection; it was not sent',
    };
    // A started request is cancelled by the connection, which destroys itself before the lane moves on.
    return this.inTurn(words, signal, (connection) => connection.request(command, this.config.timeoutMs, signal));
  }
}
