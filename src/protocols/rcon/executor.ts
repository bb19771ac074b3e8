import type { Logger } from 'pino';
import type { Clock } from '../../clock.js';
import type { BackoffPolicy } from '../../net/backoff.js';
import { RconSession } from './session.js';
import type { ExecutionContext, Executor, ExecutorStats } from '../executor.js';
import type { ResolvedOf } from '../descriptor.js';
import type { rconTransport } from './descriptor.js';

export type RconExecutorConfig = ResolvedOf<typeof rconTransport>;

export interface RconExecutorDeps {
  readonly logger: Logger;
  readonly clock?: Clock;
  /** Reconnect backoff; 250 ms doubling to 10 s by default. */
  readonly backoff?: BackoffPolicy;
  /** Where the configured game keeps the RCON password, named when the password is rejected. */
  readonly passwordHint?: string | undefined;
}

/**
 * Runs commands over Source RCON (Minecraft, srcds, ARK, Palworld, …) through one persistent
 * session. The outcome errors follow the Executor contract: CommandRefusedError before sending,
 * NotSentError while disconnected, OutcomeUnknownError once sent without an answer,
 * CredentialsError when the password is rejected.
 */
export class RconExecutor implements Executor {
  readonly connectedText: string;
  readonly #session: RconSession;
  readonly #logger: Logger;

  constructor(config: RconExecutorConfig, deps: RconExecutorDeps) {
    this.#logger = deps.logger;
    this.connectedText = `RCON (${config.flavour}) login to ${config.host}:${config.port} accepted`;
    this.#session = new RconSession(
      {
        host: config.host,
        port: config.port,
        password: config.password,
        flavour: config.flavour,
        connectTimeoutMs: config.connectTimeoutMs,
        timeoutMs: config.timeoutMs,
        maxRequestBytes: config.maxRequestBytes,
        passwordHint: deps.passwordHint,
        ...(deps.backoff ? { backoff: deps.backoff } : {}),
      },
      { logger: deps.logger, ...(deps.clock ? { clock: deps.clock } : {}) },
    );
  }

  connect(signal?: AbortSignal): Promise<void> {
    return this.#session.connect(signal);
  }

  isReady(): boolean {
    return this.#session.isReady();
  }

  waitReady(signal?: AbortSignal): Promise<void> {
    return this.#session.waitReady(signal);
  }

  async execute(command: string, context: ExecutionContext, signal?: AbortSignal): Promise<string> {
    this.#logger.debug({ commandId: context.id, serverId: context.serverId, rcon: this.#session.address }, 'sending command over RCON');
    return this.#session.request(command, signal);
  }

  query(command: string, signal?: AbortSignal): Promise<string> {
    return this.#session.request(command, signal);
  }

  stats(): ExecutorStats {
    return this.#session.stats();
  }

  close(): Promise<void> {
    return this.#session.close();
  }
}
