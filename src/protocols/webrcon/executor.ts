import type { Logger } from 'pino';
import { Agent } from 'undici';
import { systemClock } from '../../clock.js';
import { ConfigError, NotSentError } from '../../errors.js';
import type { BackoffPolicy } from '../../net/backoff.js';
import { ReconnectingLink } from '../../net/reconnecting-link.js';
import { MAX_WEBSOCKET_MESSAGE_BYTES } from '../answer-limit.js';
import { assertSingleLine, type Executor } from '../executor.js';
import { executorLink, LinkedExecutor, type LinkedExecutorDeps } from '../linked-executor.js';
import { WebRconConnectError, WebRconConnection } from './connection.js';
import { parseFrame } from './protocol.js';
import { WebRconRequests } from './requests.js';
import { NON_LITERAL_PASSWORD_HINT, webrconAddress, type WebRconAddress } from './url.js';
import type { ResolvedOf } from '../transport-descriptor.js';
import type { webrconTransport } from './descriptor.js';

export { WebRconConnectError } from './connection.js';

export type WebRconExecutorConfig = ResolvedOf<typeof webrconTransport>;

interface WebRconExecutorDeps extends LinkedExecutorDeps {
  /**
   * Sent right after each delivery command, with its own Identifier (null: do not probe).
   * Rust answers a command only if it printed something, may answer it in several frames, and
   * runs commands in order; the probe's answer therefore marks the end of the command's answer,
   * and a silent command is known to have run instead of timing out as "unknown".
   * Default "server.hostname": a read of a variable every Rust server has, without side effects.
   */
  readonly probeCommand?: string | null;
}

/**
 * 2 s doubling to 30 s: Rust refuses a new connection from the same address within a cooldown
 * (1 s by default) and bans an address after repeated failures, so no hammering.
 */
const DEFAULT_BACKOFF: BackoffPolicy = { initialMs: 2000, maxMs: 30_000 };

/**
 * Rust's WebRCON: one WebSocket to `ws://host:port/<password>`, JSON requests matched to their
 * answers by Identifier (so several may be in flight), broadcasts (Identifier 0 / -1) ignored.
 * Reconnects in the background with backoff; a rejected password stops that for good, because
 * retrying cannot fix it and Rust bans an address after a few failures.
 */
export class WebRconExecutor extends LinkedExecutor<WebRconConnection, WebRconExecutorConfig> implements Executor {
  get connectedText(): string {
    return `WebRCON login to ${this.#address.display} accepted`;
  }

  readonly #address: WebRconAddress;
  protected readonly logger: Logger;
  protected readonly over = 'WebRCON';
  readonly #probe: string | null;
  readonly #agent: Agent;
  readonly #requests: WebRconRequests;
  protected readonly link: ReconnectingLink<WebRconConnection>;

  constructor(config: WebRconExecutorConfig, deps: WebRconExecutorDeps) {
    super(config);
    try {
      this.#address = webrconAddress(config.host, config.port, config.password);
    } catch {
      throw new ConfigError(`servers[].executor.host "${config.host}" is not a valid host name or IP address`);
    }
    this.logger = deps.logger.child({ executor: 'webrcon', address: this.#address.display });
    const clock = deps.clock ?? systemClock;
    this.#probe = deps.probeCommand === undefined ? 'server.hostname' : deps.probeCommand;
    this.#agent = new Agent({ connect: { timeout: config.connectTimeoutMs }, webSocket: { maxPayloadSize: MAX_WEBSOCKET_MESSAGE_BYTES } });
    this.#requests = new WebRconRequests(
      clock,
      this.#address.display,
      (connection) => {
        if (connection !== this.link.connection) return;
        this.logger.warn(
          { event: 'webrcon.silent' },
          'no frame from the WebRCON server since the unanswered command was sent; reconnecting',
        );
        connection.terminate();
      },
      // Dropped at once, so the rest of the flood is neither read nor taken for a later answer.
      (connection) => connection.terminate(),
    );
    this.link = executorLink<WebRconConnection>(
      {
        open: (signal) =>
          WebRconConnection.open({
            address: this.#address,
            connectTimeoutMs: config.connectTimeoutMs,
            dispatcher: this.#agent,
            clock,
            signal,
          }),
        isOpen: (connection) => connection.isOpen,
        watch: (connection, ended) => {
          connection.onFrame((text) => this.#onFrame(connection, text));
          connection.onEnd((reason) => {
            this.#requests.connectionEnded(connection, reason);
            ended(reason);
          });
        },
        drop: (connection) => connection.terminate(),
        release: (connection) => connection.close(),
      },
      {
        subject: `the WebRCON session to ${this.#address.display}`,
        ConnectError: WebRconConnectError,
        connected: 'Rust WebRCON connected',
        reconnected: 'Rust WebRCON reconnected',
        lost: 'Rust WebRCON connection lost; reconnecting',
        retrying: 'Rust WebRCON reconnect failed; retrying with backoff',
        refused: 'Rust WebRCON password rejected; not reconnecting until the configuration is fixed',
      },
      { deps, logger: this.logger, clock, backoff: DEFAULT_BACKOFF },
    );
    if (!this.#address.literal) this.logger.warn({ event: 'webrcon.password.unusable' }, NON_LITERAL_PASSWORD_HINT);
  }

  /** Runs a delivery command; the answer is every frame Rust sent for it, joined by newlines. */
  protected sendCommand(command: string, signal?: AbortSignal): Promise<string> {
    return this.#request(command, this.#probe, signal);
  }

  /** Runs a read such as `playerlist` and returns the Message of its first answer as Rust sent it. */
  query(command: string, signal?: AbortSignal): Promise<string> {
    return this.#request(command, null, signal);
  }

  /** Once the link is closed (and with it every waiter and request): the agent's sockets. */
  protected override async closed(): Promise<void> {
    await this.#agent.destroy().catch(() => undefined);
  }

  async #request(command: string, probe: string | null, signal?: AbortSignal): Promise<string> {
    assertSingleLine(command);
    this.link.throwIfUnusable();
    if (signal?.aborted) throw new NotSentError('the command was cancelled before it was sent over WebRCON; it was not sent');
    const connection = this.openConnection(
      `Rust WebRCON at ${this.#address.display} is not connected (porter is reconnecting); the command was not sent`,
    );
    return this.#requests.send(connection, command, {
      probe,
      timeoutMs: this.config.timeoutMs,
      ...(signal === undefined ? {} : { signal }),
    });
  }

  #onFrame(connection: WebRconConnection, text: string): void {
    const frame = parseFrame(text);
    if (frame && this.#requests.take(connection, frame)) return;
    // Console output, chat, answers to requests already settled: not ours to act on.
    this.logger.trace({ event: 'webrcon.frame.ignored', identifier: frame?.identifier, type: frame?.type }, 'WebRCON frame ignored');
  }
}
