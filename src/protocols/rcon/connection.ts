import type { Socket } from 'node:net';
import type { Logger } from 'pino';
import { CredentialsError, messageOf, OutcomeUnknownError } from '../../errors.js';
import { AnswerTooLargeError, MAX_ANSWER_BYTES } from '../answer-limit.js';
import { openErrorOf, TcpConnection, type TcpEndpoint } from '../tcp-connection.js';
import { PacketDecoder, type RconPacket } from './codec.js';
import { RconConnectError, RconProtocolError } from './errors.js';
import { planAuth, planCommand, type RconFlavour } from './exchange.js';

export interface RconConnectionOptions extends TcpEndpoint {
  readonly password: string;
  readonly flavour: RconFlavour;
  /** Where the configured game keeps its RCON password ("rcon.password in server.properties"), for the rejected-password error. */
  readonly passwordHint?: string | undefined;
  /** Deadline for the auth answer once connected; defaults to connectTimeoutMs. */
  readonly authTimeoutMs?: number;
  /** Largest packet accepted from the server (see codec.ts). */
  readonly maxPacketLength?: number;
  /** Most answer bytes collected for one command; default MAX_ANSWER_BYTES. */
  readonly maxAnswerBytes?: number;
  /** Called when this connection switches to pairing answers by order (the server answers with id 0). */
  readonly onIdZeroAnswers?: () => void;
  readonly logger: Logger;
}

/** What the socket's events are routed to while a request (auth or command) is outstanding. */
interface Outstanding {
  onPacket(packet: RconPacket): void;
  onEnd(reason: Error): void;
}

/**
 * One TCP connection to an RCON server: connect, authenticate, then one request at a time.
 * Never reused after a timeout or any protocol doubt: it destroys itself and the session opens a
 * fresh one. Socket errors are always handled here; they end the connection, never the process.
 */
export class RconConnection extends TcpConnection<Outstanding> {
  readonly #options: RconConnectionOptions;
  readonly #decoder: PacketDecoder;
  /** How answers are paired with requests: the configured flavour until the server answers with id 0. */
  #matching: RconFlavour;
  #answered = 0;
  #nextId = 1;
  /** Worded once: every request would otherwise build it again (an idle fleet reads players 500 times a second). */
  readonly #waitingForAnswer: string;
  readonly #allocate = () => this.#allocateId();

  constructor(options: RconConnectionOptions) {
    super(options, { name: 'RCON connection', server: 'RCON' });
    this.#options = options;
    this.#matching = options.flavour;
    this.#decoder = new PacketDecoder(options.maxPacketLength === undefined ? {} : { maxPacketLength: options.maxPacketLength });
    this.#waitingForAnswer = `waiting for the answer from RCON at ${this.address}`;
  }

  /**
   * Connects and authenticates. Rejects with CredentialsError when the password is refused,
   * RconConnectError for anything else (refused, timed out, closed, aborted).
   */
  open(signal?: AbortSignal): Promise<void> {
    return this.openWith(signal, {
      meanwhile: { onPacket: () => undefined },
      login: (socket) => this.#authenticate(socket, signal),
      openError: (error) => this.#asOpenError(error),
    });
  }

  /**
   * Runs one command and returns its whole answer. NotSentError when nothing was written;
   * OutcomeUnknownError once the command was written and no answer came (the connection is then
   * destroyed). An answer that started but was cut short is returned as it is: the command ran.
   * An answer over maxAnswerBytes is AnswerTooLargeError (an OutcomeUnknownError), and the
   * connection is destroyed at once: the rest is never read.
   */
  async request(command: string, timeoutMs: number, signal?: AbortSignal): Promise<string> {
    const socket = this.socketFor('request', signal);
    const maxAnswerBytes = this.#options.maxAnswerBytes ?? MAX_ANSWER_BYTES;
    const exchange = planCommand(this.#matching, command, { nextId: this.#allocate, maxAnswerBytes });
    let written = false;
    try {
      return await this.within(timeoutMs, signal, this.#waitingForAnswer, (resolve, reject) => {
        // One write, one system call and one segment, for the command and the probe after it: a
        // write each cost a second system call per command and let the server wake for each.
        const { initial } = exchange;
        socket.write(initial.length === 1 ? initial[0]! : Buffer.concat(initial));
        written = true;
        return {
          onPacket: (packet) => {
            const step = exchange.accept(packet);
            if (step.kind === 'ignore') {
              // A Source server's extra packet after every answer: the line is built only when it is written.
              if (this.#options.logger.isLevelEnabled('debug'))
                this.#options.logger.debug(
                  { event: 'rcon.packet.ignored', packetId: packet.id, type: packet.type },
                  'RCON packet outside the current request ignored',
                );
            } else if (step.kind === 'done') {
              if (step.idZero) this.#switchToIdZero();
              this.#answered += 1;
              resolve(exchange.text());
            } else if (step.kind === 'overflow') {
              // Destroyed here, synchronously: not one more chunk of the flood is read.
              this.destroy(new AnswerTooLargeError(`RCON at ${this.address}`, maxAnswerBytes));
            } else if (step.write) {
              socket.write(step.write);
            }
          },
          onEnd: reject,
        };
      });
    } catch (error) {
      this.failedRequest(error, written, (e) => e instanceof AnswerTooLargeError);
      if (exchange.fragments > 0) {
        this.#options.logger.warn(
          { event: 'rcon.answer.incomplete', fragments: exchange.fragments, err: messageOf(error) },
          'RCON answer may be incomplete: the end of the answer never came, but the command ran',
        );
        return exchange.text();
      }
      throw new OutcomeUnknownError(
        `no complete answer from RCON at ${this.address} (${messageOf(error)}); ` +
          'the command was sent and may have run, so it is not sent again',
        { cause: error },
      );
    }
  }

  async #authenticate(socket: Socket, signal: AbortSignal | undefined): Promise<void> {
    const { host, port } = this.#options;
    const auth = planAuth(this.#options.password, this.#allocateId());
    const timeoutMs = this.#options.authTimeoutMs ?? this.#options.connectTimeoutMs;
    await this.within<void>(timeoutMs, signal, `waiting for RCON at ${this.address} to answer the login`, (resolve, reject) => {
      socket.write(auth.packet);
      return {
        onPacket: (packet) => {
          const verdict = auth.accept(packet);
          if (verdict === 'accepted') resolve(undefined);
          else if (verdict === 'rejected') {
            reject(
              new CredentialsError(
                `the RCON password was rejected by ${host}:${port}; fix "password" or "passwordFile" of this server's executor ` +
                  "in the config, or PORTER_RCON_PASSWORD, so that it matches the game server's RCON password" +
                  (this.#options.passwordHint === undefined ? '' : ` (${this.#options.passwordHint})`),
              ),
            );
          }
        },
        onEnd: (reason) =>
          reject(
            new RconConnectError(
              `RCON at ${this.address} ended the connection during login (${reason.message}); check that the port is the RCON port ` +
                '(some servers also drop the connection on a wrong password)',
              { cause: reason },
            ),
          ),
      };
    });
  }

  protected override onData(chunk: Buffer): void {
    const { packets, error } = this.#decoder.push(chunk);
    this.#deliver(packets);
    // After the packets before it: an answer that arrived whole still counts.
    if (error) this.end(error);
  }

  #deliver(packets: readonly RconPacket[]): void {
    for (const packet of packets) {
      // A packet may have ended the connection (an overflow): the rest of the chunk is not looked at.
      if (this.endReason) return;
      const outstanding = this.outstanding;
      if (outstanding) outstanding.onPacket(packet);
      else this.#onUnaskedPacket(packet);
    }
  }

  /**
   * Ids pair answers with requests, so a packet nobody waits for is harmless (srcds' extra packet,
   * a late fragment) and dropped. Paired by order (id 0) it is not: it would be taken for the next
   * command's answer, and every answer after it would be off by one. So once a command was
   * answered by order, such a packet resets the connection. Before that it may be login noise.
   */
  #onUnaskedPacket(packet: RconPacket): void {
    if (this.#matching === 'id0' && this.#answered > 0) {
      this.end(
        new RconProtocolError(
          `RCON at ${this.address} sent a packet no request was waiting for, on a connection that pairs answers by order (id 0); ` +
            'porter reset the connection so that it cannot be taken for the next answer',
        ),
      );
      return;
    }
    this.#options.logger.debug({ event: 'rcon.packet.ignored', packetId: packet.id, type: packet.type }, 'unexpected RCON packet ignored');
  }

  #switchToIdZero(): void {
    if (this.#matching === 'id0') return;
    this.#matching = 'id0';
    this.#options.onIdZeroAnswers?.();
  }

  #allocateId(): number {
    const id = this.#nextId;
    // Stay positive: -1 means "auth failed" and 0 is what id-0 servers answer with.
    this.#nextId = id >= 0x7fffffff ? 1 : id + 1;
    return id;
  }

  #asOpenError(error: unknown): Error {
    return openErrorOf(
      error,
      RconConnectError,
      `RCON at ${this.address}`,
      (message) =>
        `could not connect to RCON at ${this.address}: ${message}; check host and port, that RCON is enabled on the game server ` +
        '(Minecraft: enable-rcon=true) and that a firewall lets porter reach it',
    );
  }
}
