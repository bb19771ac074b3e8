import type { Socket } from 'node:dgram';
import type { Logger } from 'pino';
import { startDeadline } from '../../clock.js';
import { NotSentError, OutcomeUnknownError } from '../../errors.js';
import { AnswerTooLargeError } from '../answer-limit.js';
import { AnswerParts } from './answer-parts.js';
import { loginOverUdp, type LoginOptions } from './login.js';
import { MessageSeen } from './message-seen.js';
import { decodeServerPacket, encodeAck, encodeCommand, type ServerPacket } from './packet.js';

export interface BattlEyeConnectionOptions extends LoginOptions {
  /** Deadline of a keepalive's answer. */
  readonly timeoutMs: number;
  /** Sends an empty command after this long without sending one (BattlEye drops a client silent for 45 s). */
  readonly keepaliveMs: number;
  readonly maxAnswerBytes: number;
  readonly logger: Logger;
}

interface Pending {
  readonly parts: AnswerParts;
  settle(outcome: { answer: string } | { error: Error }): void;
}

/**
 * One logged-in BattlEye RCon client: a connected UDP socket, commands matched to their answers
 * by sequence number, server messages acknowledged, and an empty command whenever nothing was
 * sent for `keepaliveMs`.
 *
 * UDP says nothing about delivery, so a command is "sent" once the datagram left, and a command
 * whose answer does not come in time has an unknown outcome: it is never sent again. Any request
 * left unanswered (a command or a keepalive) ends the connection: the server has gone, dropped
 * this client, or lost datagrams, and a new socket guarantees that a late answer can never be
 * taken for the answer to a later command that reuses its sequence number.
 */
export class BattlEyeConnection {
  readonly #socket: Socket;
  readonly #options: BattlEyeConnectionOptions;
  readonly #where: string;
  readonly #pending = new Map<number, Pending>();
  readonly #messages = new MessageSeen();
  #nextSeq = 0;
  #open = true;
  #cancelKeepalive = () => {};
  #onEnd: (reason: string) => void = () => {};

  private constructor(socket: Socket, options: BattlEyeConnectionOptions) {
    this.#socket = socket;
    this.#options = options;
    this.#where = `BattlEye RCon at ${options.host}:${options.port}`;
    socket.on('message', (datagram: Buffer) => this.#onDatagram(datagram));
    socket.on('error', (error: NodeJS.ErrnoException) => this.#end(`socket error (${error.code ?? error.message})`));
    this.#armKeepalive();
  }

  /** Logs in on a new socket; rejects with CredentialsError on a wrong password, BattlEyeConnectError otherwise. */
  static async open(options: BattlEyeConnectionOptions, signal?: AbortSignal): Promise<BattlEyeConnection> {
    return new BattlEyeConnection(await loginOverUdp(options, signal), options);
  }

  get isOpen(): boolean {
    return this.#open;
  }

  onEnd(listener: (reason: string) => void): void {
    this.#onEnd = listener;
  }

  /**
   * Sends one command and resolves with its whole answer. NotSentError when the connection is
   * closed or the datagram could not leave; OutcomeUnknownError once it left and no complete
   * answer came within `timeoutMs` (or the signal aborted, or the connection ended meanwhile).
   */
  request(text: string, timeoutMs: number, signal?: AbortSignal): Promise<string> {
    if (!this.#open) return Promise.reject(new NotSentError(`${this.#where} is not connected; the command was not sent`));
    if (signal?.aborted)
      return Promise.reject(new NotSentError('the command was cancelled before it was sent over BattlEye RCon; it was not sent'));
    return this.#send(text, timeoutMs, signal);
  }

  /**
   * An empty command, answered: the server is there and knows this client, right before a delivery
   * command goes out. A server that went down or dropped the client is found out here, while the
   * command is still provably unsent, instead of by the command itself, whose outcome would then be
   * unknown. Rejects with NotSentError (and the connection ends) when the probe goes unanswered.
   */
  async probe(timeoutMs: number, signal?: AbortSignal): Promise<void> {
    if (!this.#open) throw new NotSentError(`${this.#where} is not connected; the command was not sent`);
    try {
      await this.#send('', timeoutMs, signal, 'probe');
    } catch (error) {
      throw new NotSentError(
        `${this.#where} did not answer the empty command porter sends before each delivery (${(error as Error).message}); the command was not sent`,
        { cause: error },
      );
    }
  }

  /** Closes the socket; requests in flight become unknown. */
  close(reason = 'porter closed the BattlEye RCon connection'): void {
    this.#end(reason);
  }

  #send(
    text: string,
    timeoutMs: number,
    signal: AbortSignal | undefined,
    what: 'command' | 'keepalive' | 'probe' = 'command',
  ): Promise<string> {
    const seq = this.#allocateSeq();
    return new Promise<string>((resolve, reject) => {
      let cancelDeadline = () => {};
      const onAbort = () =>
        pending.settle({
          error: new OutcomeUnknownError('the command was cancelled after it was sent over BattlEye RCon; whether it ran is unknown'),
        });
      const pending: Pending = {
        parts: new AnswerParts(this.#options.maxAnswerBytes),
        settle: (outcome) => {
          if (this.#pending.get(seq) !== pending) return;
          this.#pending.delete(seq);
          cancelDeadline();
          signal?.removeEventListener('abort', onAbort);
          if ('answer' in outcome) resolve(outcome.answer);
          else reject(outcome.error);
        },
      };
      this.#pending.set(seq, pending);
      signal?.addEventListener('abort', onAbort, { once: true });
      cancelDeadline = startDeadline(this.#options.clock, timeoutMs, () => {
        pending.settle({
          error: new OutcomeUnknownError(
            `${this.#where} sent no ${pending.parts.received > 0 ? 'complete ' : ''}answer within ${timeoutMs} ms (servers[].executor.timeoutMs); ` +
              'the command was sent, so whether it ran is unknown and it is not sent again',
          ),
        });
        this.#end(
          what === 'command' ? `a command got no answer within ${timeoutMs} ms` : `no answer to the ${what} within ${timeoutMs} ms`,
        );
      });
      this.#transmit(encodeCommand(seq, text), (error) => {
        pending.settle({
          error: new NotSentError(`the command could not be sent to ${this.#where} (${error.code ?? error.message}); it was not sent`),
        });
        this.#end(`sending failed (${error.code ?? error.message})`);
      });
      this.#armKeepalive();
    });
  }

  /** Hands a datagram to the kernel; `onError` only when it provably did not leave. */
  #transmit(datagram: Buffer, onError: (error: NodeJS.ErrnoException) => void): void {
    try {
      this.#socket.send(datagram, (error) => {
        if (error) onError(error);
      });
    } catch (error) {
      onError(error as NodeJS.ErrnoException);
    }
  }

  /** The next sequence number no request in flight holds (at most two are: a command and a keepalive). */
  #allocateSeq(): number {
    for (;;) {
      const seq = this.#nextSeq;
      this.#nextSeq = (seq + 1) & 0xff;
      if (!this.#pending.has(seq)) return seq;
    }
  }

  #armKeepalive(): void {
    this.#cancelKeepalive();
    this.#cancelKeepalive = startDeadline(this.#options.clock, this.#options.keepaliveMs, () => {
      if (!this.#open) return;
      this.#options.traffic.keepalives += 1;
      // An unanswered keepalive ends the connection by itself; nobody waits for its answer.
      this.#send('', this.#options.timeoutMs, undefined, 'keepalive').catch(() => {});
    });
  }

  #onDatagram(datagram: Buffer): void {
    if (!this.#open) return;
    const decoded = decodeServerPacket(datagram);
    if ('problem' in decoded) {
      this.#options.traffic.dropped += 1;
      this.#options.logger.debug({ problem: decoded.problem, bytes: datagram.length }, 'BattlEye RCon datagram dropped');
      return;
    }
    this.#onPacket(decoded.packet);
  }

  #onPacket(packet: ServerPacket): void {
    const { traffic, logger, clock } = this.#options;
    switch (packet.kind) {
      case 'login':
        traffic.ignoredAnswers += 1;
        return;
      case 'message': {
        // Acknowledged every time: the server repeats a message until it sees the ack, then drops a client that never acks.
        this.#transmit(encodeAck(packet.seq), () => {});
        traffic.messages += 1;
        if (this.#messages.repeat(packet.seq, clock.now())) traffic.repeatedMessages += 1;
        else logger.debug({ message: packet.body.toString('utf8') }, 'BattlEye server message');
        return;
      }
      case 'answer': {
        const pending = this.#pending.get(packet.seq);
        if (!pending) {
          traffic.ignoredAnswers += 1;
          return;
        }
        switch (pending.parts.add(packet.total, packet.index, packet.body)) {
          case 'complete':
            pending.settle({ answer: pending.parts.text() });
            return;
          case 'partial':
            return;
          case 'rejected':
            traffic.ignoredAnswers += 1;
            return;
          case 'too-large':
            pending.settle({ error: new AnswerTooLargeError(this.#where, this.#options.maxAnswerBytes) });
            this.#end('an answer outgrew the cap');
            return;
        }
      }
    }
  }

  #end(reason: string): void {
    if (!this.#open) return;
    this.#open = false;
    this.#cancelKeepalive();
    this.#socket.removeAllListeners('message');
    try {
      this.#socket.close();
    } catch {
      // already closed
    }
    for (const pending of [...this.#pending.values()]) {
      pending.settle({
        error: new OutcomeUnknownError(
          `the BattlEye RCon connection to ${this.#options.host}:${this.#options.port} ended ` +
            `${pending.parts.received > 0 ? 'in the middle of the answer' : 'before the answer arrived'} (${reason}); ` +
            'the command was sent, so whether it ran is unknown',
        ),
      });
    }
    this.#onEnd(reason);
  }
}
