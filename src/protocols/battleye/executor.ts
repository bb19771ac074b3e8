import type { Logger } from 'pino';
import { systemClock } from '../../clock.js';
import { CommandRefusedError } from '../../errors.js';
import { ReconnectingLink } from '../../net/reconnecting-link.js';
import { MAX_ANSWER_BYTES } from '../answer-limit.js';
import { assertSingleLine, type Executor } from '../executor.js';
import { executorLink, LinkedExecutor, type LinkedExecutorDeps } from '../linked-executor.js';
import { BattlEyeConnection } from './connection.js';
import { BattlEyeConnectError } from './errors.js';
import { MAX_COMMAND_BYTES } from './packet.js';
import { emptyTraffic, type BattlEyeTraffic } from './traffic.js';
import type { ResolvedOf } from '../transport-descriptor.js';
import type { battleyeTransport } from './descriptor.js';

export type BattlEyeExecutorConfig = ResolvedOf<typeof battleyeTransport>;

export interface BattlEyeExecutorDeps extends LinkedExecutorDeps {
  /**
   * An empty command goes out after this long without a command. BattlEye drops a client that sent
   * no command for 45 s; clients commonly use 30 s, which leaves room for a lost datagram.
   */
  readonly keepaliveMs?: number;
  /** For tests of the cap; MAX_ANSWER_BYTES otherwise. */
  readonly maxAnswerBytes?: number;
}

const DEFAULT_KEEPALIVE_MS = 30_000;

/**
 * DayZ and Arma 3 over BattlEye RCon (UDP): one logged-in client per server, one command in
 * flight at a time, reconnecting (a new socket and login) with backoff whenever the connection
 * ends, which a single missing answer does not do (see BattlEyeConnection: an empty command
 * checks the session first). The outcome errors follow the Executor contract: CommandRefusedError before sending,
 * NotSentError while not logged in or when the datagram could not leave, OutcomeUnknownError
 * once it left without an answer, CredentialsError when the password is rejected.
 */
export class BattlEyeExecutor extends LinkedExecutor<BattlEyeConnection, BattlEyeExecutorConfig> implements Executor {
  readonly connectedText: string;
  protected readonly logger: Logger;
  protected readonly over = 'BattlEye RCon';
  readonly #traffic = emptyTraffic();
  protected readonly link: ReconnectingLink<BattlEyeConnection>;

  constructor(config: BattlEyeExecutorConfig, deps: BattlEyeExecutorDeps) {
    super(config);
    const address = `${config.host}:${config.port}`;
    this.connectedText = `BattlEye RCon login to ${address} (UDP) accepted`;
    this.logger = deps.logger.child({ executor: 'battleye', address });
    const clock = deps.clock ?? systemClock;
    const connectionOptions = {
      host: config.host,
      port: config.port,
      password: config.password,
      connectTimeoutMs: config.connectTimeoutMs,
      timeoutMs: config.timeoutMs,
      keepaliveMs: deps.keepaliveMs ?? DEFAULT_KEEPALIVE_MS,
      maxAnswerBytes: deps.maxAnswerBytes ?? MAX_ANSWER_BYTES,
      clock,
      logger: this.logger,
      traffic: this.#traffic,
    };
    this.link = executorLink<BattlEyeConnection>(
      {
        open: (signal) => BattlEyeConnection.open(connectionOptions, signal),
        isOpen: (connection) => connection.isOpen,
        watch: (connection, ended) => connection.onEnd(ended),
        drop: (connection) => connection.close(),
        release: (connection) => connection.close(),
      },
      {
        subject: `the BattlEye RCon session to ${address}`,
        ConnectError: BattlEyeConnectError,
        connected: 'BattlEye RCon logged in',
        reconnected: 'BattlEye RCon logged in again',
        lost: 'BattlEye RCon connection lost; logging in again',
        retrying: 'BattlEye RCon login failed; retrying with backoff',
        refused: 'BattlEye RCon password rejected; not reconnecting until the configuration is fixed',
      },
      { deps, logger: this.logger, clock },
    );
  }

  /** Datagrams dropped or ignored, messages acknowledged, keepalives sent, since this executor started. */
  traffic(): Readonly<BattlEyeTraffic> {
    return { ...this.#traffic };
  }

  /** Runs a delivery command, after an empty command has shown the server is there (see BattlEyeConnection.probe). */
  protected sendCommand(command: string, signal?: AbortSignal): Promise<string> {
    return this.#request(command, true, signal);
  }

  query(command: string, signal?: AbortSignal): Promise<string> {
    return this.#request(command, false, signal);
  }

  async #request(command: string, probeFirst: boolean, signal?: AbortSignal): Promise<string> {
    assertSingleLine(command);
    const bytes = Buffer.byteLength(command, 'utf8');
    if (bytes > MAX_COMMAND_BYTES) {
      throw new CommandRefusedError(
        `the command is ${bytes} bytes, more than one BattlEye RCon datagram carries (${MAX_COMMAND_BYTES}); it was not sent`,
      );
    }
    const words = {
      notConnected: `BattlEye RCon at ${this.config.host}:${this.config.port} is not logged in (porter is logging in again); the command was not sent`,
      cancelledWaiting: 'the command was cancelled while waiting for the BattlEye RCon connection; it was not sent',
    };
    return this.inTurn(words, signal, async (connection) => {
      if (probeFirst) await connection.probe(this.config.timeoutMs, signal);
      return await connection.request(command, this.config.timeoutMs, signal);
    });
  }
}
