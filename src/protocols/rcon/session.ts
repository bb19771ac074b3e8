import { NotSentError } from '../../errors.js';
import type { Logger } from 'pino';
import { systemClock, type Clock } from '../../clock.js';
import { SerialLane } from '../../serial-lane.js';
import { ReconnectingLink } from '../../net/reconnecting-link.js';
import { DEFAULT_RECONNECT_BACKOFF, type BackoffPolicy } from '../../net/backoff.js';
import { RconConnection, type RconConnectionOptions } from './connection.js';
import { RconConnectError } from './errors.js';
import { assertSendable } from './request-limits.js';

interface RconSessionOptions extends Omit<RconConnectionOptions, 'logger' | 'clock' | 'onIdZeroAnswers'> {
  /** Deadline for one command's whole answer. */
  readonly timeoutMs: number;
  /** Longest command in UTF-8 bytes (see request-limits.ts). */
  readonly maxRequestBytes: number;
  readonly backoff?: BackoffPolicy;
}

interface RconSessionDeps {
  readonly logger: Logger;
  readonly clock?: Clock;
  /** For tests of the jitter; Math.random otherwise. */
  readonly random?: () => number;
}

/**
 * One persistent, authenticated connection per game server. Commands go through a serial lane:
 * one request in flight, because Minecraft closes a connection whose read holds
 * more than one packet and id-0 servers give us no other way to pair answers with requests.
 * When the connection drops it reconnects in the background with backoff; a rejected password
 * stops that for good (retrying cannot fix it and would hammer the server's auth).
 */
export class RconSession {
  readonly #options: RconSessionOptions;
  readonly #lane = new SerialLane();
  readonly #link: ReconnectingLink<RconConnection>;
  #idZeroLogged = false;

  constructor(options: RconSessionOptions, deps: RconSessionDeps) {
    this.#options = options;
    const logger = deps.logger;
    const clock = deps.clock ?? systemClock;
    // Each connection finds out for itself (a restarted server may behave), but the operator is
    // told once per executor: the fix is the same every time.
    const onIdZeroAnswers = () => {
      const fields = { rcon: this.address, flavour: options.flavour };
      if (this.#idZeroLogged) {
        logger.debug(fields, 'RCON server answers with id 0: this connection pairs answers by order too');
        return;
      }
      this.#idZeroLogged = true;
      logger.warn(
        fields,
        `RCON server answers with id 0 although the flavour is "${options.flavour}": porter pairs answers with commands by order ` +
          'on such connections from now on; set "flavour": "id0" on this server\'s executor to say so (Palworld does this)',
      );
    };
    this.#link = new ReconnectingLink<RconConnection>({
      transport: {
        open: async (signal) => {
          const connection = new RconConnection({ ...options, logger, clock, onIdZeroAnswers });
          await connection.open(signal);
          return connection;
        },
        isOpen: (connection) => connection.state === 'ready',
        watch: (connection, ended) => connection.onEnd((reason) => ended(reason.message)),
        drop: (connection) => connection.destroy(),
        release: (connection) => connection.destroy(new Error('porter closed the RCON session')),
      },
      wording: {
        subject: `the RCON session to ${this.address}`,
        ConnectError: RconConnectError,
        connected: 'RCON connected and logged in',
        reconnected: 'RCON reconnected and logged in',
        lost: 'RCON connection lost; reconnecting',
        retrying: 'RCON reconnect failed; retrying with backoff',
        refused: 'RCON password rejected; not reconnecting until the configuration is fixed',
        fields: { rcon: this.address },
        connectedFields: { flavour: options.flavour },
      },
      backoff: options.backoff ?? DEFAULT_RECONNECT_BACKOFF,
      logger,
      clock,
      random: deps.random ?? Math.random,
    });
  }

  get address(): string {
    return `${this.#options.host}:${this.#options.port}`;
  }

  isReady(): boolean {
    return this.#link.isReady();
  }

  stats(): { connected: boolean; reconnects: number } {
    return { connected: this.isReady(), reconnects: this.#link.reconnects };
  }

  /**
   * One connection attempt now (or joins the one under way). Rejects with CredentialsError on a
   * wrong password, RconConnectError otherwise; does not retry (waitReady does).
   */
  connect(signal?: AbortSignal): Promise<void> {
    return this.#link.connect(signal);
  }

  /** Resolves once logged in, reconnecting with backoff meanwhile; rejects on abort, close or a rejected password. */
  waitReady(signal?: AbortSignal): Promise<void> {
    return this.#link.waitReady(signal);
  }

  /**
   * Runs one command and returns the whole answer. Refused commands (CR/LF/NUL, too long) reject
   * with CommandRefusedError before anything is queued; while disconnected, NotSentError at once
   * (the delivery loop decides whether to wait); see RconConnection.request for the rest.
   */
  async request(command: string, signal?: AbortSignal): Promise<string> {
    assertSendable(command, this.#options.maxRequestBytes);
    this.#link.throwIfUnusable();
    let started = false;
    try {
      // Not async: the lane turns a throw into its rejection, and a read saves a frame.
      return await this.#lane.run(() => {
        started = true;
        this.#link.throwIfUnusable();
        const connection = this.#link.connection;
        if (!connection || connection.state !== 'ready') {
          this.#link.ensureReconnecting();
          throw new NotSentError(`RCON at ${this.address} is not connected (porter is reconnecting); the command was not sent`);
        }
        // A started request is cancelled by the connection, which destroys itself before the lane moves on.
        return connection.request(command, this.#options.timeoutMs, signal);
      }, signal);
    } catch (error) {
      if (started) throw error;
      throw new NotSentError('the command was cancelled while waiting for the RCON connection; it was not sent', { cause: signal?.reason });
    }
  }

  /** Stops reconnecting, drops the connection and settles every waiter; leaves no timers behind. */
  async close(): Promise<void> {
    if (this.#link.closed) return;
    await Promise.allSettled([this.#link.close(), this.#lane.idle()]);
  }
}
