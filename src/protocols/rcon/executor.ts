import type { Logger } from 'pino';
import { systemClock } from '../../clock.js';
import { ReconnectingLink } from '../../net/reconnecting-link.js';
import type { Executor } from '../executor.js';
import { executorLink, LinkedExecutor, type LinkedExecutorDeps } from '../linked-executor.js';
import { tcpLinkTransport } from '../tcp-connection.js';
import { RconConnection } from './connection.js';
import { RconConnectError } from './errors.js';
import { assertSendable } from './request-limits.js';
import type { ResolvedOf } from '../transport-descriptor.js';
import type { rconTransport } from './descriptor.js';

export type RconExecutorConfig = ResolvedOf<typeof rconTransport>;

/** Reconnect backoff by default 250 ms doubling to 10 s (DEFAULT_RECONNECT_BACKOFF). */
interface RconExecutorDeps extends LinkedExecutorDeps {
  /** Where the configured game keeps the RCON password, named when the password is rejected. */
  readonly passwordHint?: string | undefined;
}

/**
 * Source RCON (Minecraft, srcds, ARK, Palworld, …) over one persistent, logged-in connection per
 * server, one request in flight on it: Minecraft closes a connection whose read holds more than
 * one packet, and id-0 servers give no other way to pair answers with requests. Reconnects in the
 * background with backoff; a rejected password stops that for good (retrying cannot fix it and
 * would hammer the server's auth). The outcome errors follow the Executor contract:
 * CommandRefusedError before sending, NotSentError while disconnected, OutcomeUnknownError once
 * sent without an answer, CredentialsError when the password is rejected.
 */
export class RconExecutor extends LinkedExecutor<RconConnection, RconExecutorConfig> implements Executor {
  readonly connectedText: string;
  readonly #address: string;
  protected readonly logger: Logger;
  protected readonly over = 'RCON';
  #idZeroLogged = false;
  protected readonly link: ReconnectingLink<RconConnection>;

  constructor(config: RconExecutorConfig, deps: RconExecutorDeps) {
    super(config);
    this.#address = `${config.host}:${config.port}`;
    this.connectedText = `RCON (${config.flavour}) login to ${this.#address} accepted`;
    this.logger = deps.logger.child({ executor: 'rcon', address: this.#address });
    const clock = deps.clock ?? systemClock;
    const onIdZeroAnswers = () => this.#idZeroAnswers();
    this.link = executorLink<RconConnection>(
      tcpLinkTransport(async (signal) => {
        const { host, port, password, flavour, connectTimeoutMs } = config;
        const options = { host, port, password, flavour, connectTimeoutMs, passwordHint: deps.passwordHint };
        const connection = new RconConnection({ ...options, logger: this.logger, clock, onIdZeroAnswers });
        await connection.open(signal);
        return connection;
      }, 'porter closed the RCON session'),
      {
        subject: `the RCON session to ${this.#address}`,
        ConnectError: RconConnectError,
        connected: 'RCON connected and logged in',
        reconnected: 'RCON reconnected and logged in',
        lost: 'RCON connection lost; reconnecting',
        retrying: 'RCON reconnect failed; retrying with backoff',
        refused: 'RCON password rejected; not reconnecting until the configuration is fixed',
        connectedFields: { flavour: config.flavour },
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
   * Runs one command and returns the whole answer. Refused commands (CR/LF/NUL, too long) reject
   * with CommandRefusedError before anything is queued; while disconnected, NotSentError at once
   * (the delivery loop decides whether to wait); see RconConnection.request for the rest.
   */
  async #request(command: string, signal?: AbortSignal): Promise<string> {
    assertSendable(command, this.config.maxRequestBytes);
    const words = {
      notConnected: `RCON at ${this.#address} is not connected (porter is reconnecting); the command was not sent`,
      cancelledWaiting: 'the command was cancelled while waiting for the RCON connection; it was not sent',
    };
    // A started request is cancelled by the connection, which destroys itself before the lane moves on.
    return this.inTurn(words, signal, (connection) => connection.request(command, this.config.timeoutMs, signal));
  }

  /**
   * Each connection finds out for itself that its server answers with id 0 (a restarted server
   * may behave), but the operator is told once per executor: the fix is the same every time.
   */
  #idZeroAnswers(): void {
    const fields = { flavour: this.config.flavour };
    if (this.#idZeroLogged) {
      this.logger.debug({ event: 'rcon.id0', ...fields }, 'RCON server answers with id 0: this connection pairs answers by order too');
      return;
    }
    this.#idZeroLogged = true;
    this.logger.warn(
      { event: 'rcon.id0', ...fields },
      `RCON server answers with id 0 although the flavour is "${this.config.flavour}": porter pairs answers with commands by order ` +
        'on such connections from now on; set "flavour": "id0" on this server\'s executor to say so (Palworld does this)',
    );
  }
}
