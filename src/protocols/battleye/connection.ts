import type { Socket } from 'node:dgram';
import type { Logger } from 'pino';
import { startDeadline } from '../../clock.js';
import { messageOf, NotSentError, OutcomeUnknownError } from '../../errors.js';
import { AnswerTooLargeError } from '../answer-limit.js';
import { AnswerParts } from './answer-parts.js';
import { loginOverUdp, type LoginOptions } from './login.js';
import { MessageSeen } from './message-seen.js';
import { decodeServerPacket, encodeAck, encodeCommand, type ServerPacket } from './packet.js';

interface BattlEyeConnectionOptions extends LoginOptions {
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

type RequestKind = 'command' | 'keepalive' | 'probe' | 'recheck';

/**
 * How long the sequence number of a request that went unanswered stays out of use on its session.
 * Its answer may still be on the way (a server that stalled for a moment, a datagram held in a
 * queue), and a late answer must never be taken for the answer to a later request under the same
 * one-byte number. Two minutes is the longest a datagram is assumed to wander the internet (TCP's
 * maximum segment lifetime, RFC 9293 §3.4.2, guards against the same hazard); real late answers
 * come within seconds, and the recheck's answer shows the server has caught up.
 */
const RETIRED_MS = 120_000;

/**
 * Unanswered requests one session may hold retired at once. A path that loses more than this
 * within RETIRED_MS is better served by a new login, and the bound keeps sequence numbers free.
 */
const MAX_RETIRED = 16;

/**
 * One logged-in BattlEye RCon client: a connected UDP socket, commands matched to their answers
 * by sequence number, server messages acknowledged, and an empty command whenever nothing was
 * sent for `keepaliveMs`.
 *
 * UDP says nothing about delivery, so a command is "sent" once the datagram left, and a command
 * whose answer does not come in time has an unknown outcome: it is never sent again.
 *
 * One missing answer is not a lost session. Logging in again is not free: BattlEye announces
 * every login to the server's admins ("RCon admin #N logged in"), and server messages sent to
 * the old session are lost. So a request left unanswered (a command, a keepalive, the probe
 * before a delivery) is followed by a recheck: an empty command, which BattlEye answers on a live
 * session with an empty answer under the same sequence number (BERConProtocol.txt, "Command
 * packet": the server acknowledges a command with its sequence number and a response "OR
 * nothing"; https://www.battleye.com/downloads/BERConProtocol.txt, copied in
 * WoozyMasta/bercon-cli pkg/bercon/spec/bercon-protocol.md). Requests wait for it. Answered,
 * the session goes on; unanswered too, the server has gone or dropped this client (it does after
 * 45 s without a command, or after 5 unacknowledged message sends) and the connection ends, so
 * the link logs in again on a new socket.
 *
 * The hazard the old "new socket after any missing answer" rule avoided: the unanswered
 * request's answer may still come, and with one-byte sequence numbers that wrap, it must never be
 * taken for the answer to a later request under the same number. So the number is retired: no
 * request on this session uses it for RETIRED_MS, whatever wraps meanwhile, and an answer that
 * arrives for it is counted as late and ignored. At most MAX_RETIRED numbers are retired at once;
 * one more unanswered request replaces the session instead.
 */
export class BattlEyeConnection {
  readonly #socket: Socket;
  readonly #options: BattlEyeConnectionOptions;
  readonly #where: string;
  readonly #pending = new Map<number, Pending>();
  readonly #messages = new MessageSeen();
  /** Sequence number → when it may be used again (see RETIRED_MS). */
  readonly #retired = new Map<number, number>();
  /** The empty command sent after a request went unanswered, while it waits for its answer. */
  #recheck: Promise<void> | undefined;
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
   * Sends one command and resolves with its whole answer, after the recheck under way (if any)
   * found the session alive. NotSentError when the connection is closed or ends during the
   * recheck, or the datagram could not leave; OutcomeUnknownError once it left and no complete
   * answer came within `timeoutMs` (or the signal aborted, or the connection ended meanwhile).
   */
  async request(text: string, timeoutMs: number, signal?: AbortSignal): Promise<string> {
    await this.#afterRecheck(signal);
    if (!this.#open) throw new NotSentError(`${this.#where} is not connected; the command was not sent`);
    if (signal?.aborted) throw new NotSentError('the command was cancelled before it was sent over BattlEye RCon; it was not sent');
    return this.#send(text, timeoutMs, signal);
  }

  /**
   * An empty command, answered: the server is there and knows this client, right before a delivery
   * command goes out. A server that went down or dropped the client is found out here, while the
   * command is still provably unsent, instead of by the command itself, whose outcome would then be
   * unknown. Rejects with NotSentError when the probe goes unanswered (a recheck follows, and the
   * connection ends if that goes unanswered too).
   */
  async probe(timeoutMs: number, signal?: AbortSignal): Promise<void> {
    await this.#afterRecheck(signal);
    if (!this.#open) throw new NotSentError(`${this.#where} is not connected; the command was not sent`);
    try {
      await this.#send('', timeoutMs, signal, 'probe');
    } catch (error) {
      throw new NotSentError(
        `${this.#where} did not answer the empty command porter sends before each delivery (${messageOf(error)}); the command was not sent`,
        { cause: error },
      );
    }
  }

  /** Closes the socket; requests in flight become unknown. */
  close(reason = 'porter closed the BattlEye RCon connection'): void {
    this.#end(reason);
  }

  /** Resolves once no recheck is under way; NotSentError when the signal aborts meanwhile. */
  #afterRecheck(signal: AbortSignal | undefined): Promise<void> {
    const recheck = this.#recheck;
    if (!recheck) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const onAbort = () =>
        reject(new NotSentError('the command was cancelled while porter checked the BattlEye RCon session; it was not sent'));
      signal?.addEventListener('abort', onAbort, { once: true });
      void recheck.then(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      });
    });
  }

  #send(text: string, timeoutMs: number, signal: AbortSignal | undefined, what: RequestKind = 'command'): Promise<string> {
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
        this.#unanswered(seq, what, timeoutMs);
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

  /**
   * The next sequence number that no request in flight holds (at most three: a command, a
   * keepalive, a recheck) and that is not retired. Always found: at most MAX_RETIRED + 3 of 256
   * are taken.
   */
  #allocateSeq(): number {
    const now = this.#options.clock.now();
    for (const [seq, until] of this.#retired) if (until <= now) this.#retired.delete(seq);
    for (;;) {
      const seq = this.#nextSeq;
      this.#nextSeq = (seq + 1) & 0xff;
      if (!this.#pending.has(seq) && !this.#retired.has(seq)) return seq;
    }
  }

  /**
   * A request got no answer in time: its sequence number is retired, and an empty command checks
   * whether the session is still there. A recheck that goes unanswered itself ends the connection.
   */
  #unanswered(seq: number, what: RequestKind, timeoutMs: number): void {
    if (!this.#open) return;
    if (what === 'recheck') {
      this.#end(`no answer within ${timeoutMs} ms to a request, nor to the empty command sent after it`);
      return;
    }
    this.#retired.set(seq, this.#options.clock.now() + RETIRED_MS);
    if (this.#retired.size > MAX_RETIRED) {
      this.#end(`more than ${MAX_RETIRED} requests went unanswered within ${RETIRED_MS / 1000} s`);
      return;
    }
    if (this.#recheck) return;
    const { traffic, logger } = this.#options;
    traffic.rechecks += 1;
    logger.debug(
      { event: 'battleye.probe', unanswered: what, timeoutMs },
      'BattlEye RCon request unanswered; checking the session with an empty command',
    );
    this.#recheck = this.#send('', this.#options.timeoutMs, undefined, 'recheck').then(
      () => {
        this.#recheck = undefined;
        logger.info({ event: 'battleye.kept', unanswered: what }, 'BattlEye RCon session still answers after a missing answer; keeping it');
      },
      () => {
        this.#recheck = undefined;
      },
    );
  }

  #armKeepalive(): void {
    this.#cancelKeepalive();
    this.#cancelKeepalive = startDeadline(this.#options.clock, this.#options.keepaliveMs, () => {
      // A recheck under way is a command packet too: it keeps the login alive.
      if (!this.#open || this.#recheck) return;
      const { traffic } = this.#options;
      traffic.keepalives += 1;
      // An unanswered keepalive starts a recheck by itself; nobody else waits for its answer.
      this.#send('', this.#options.timeoutMs, undefined, 'keepalive').then(
        () => (traffic.answeredKeepalives += 1),
        () => {},
      );
    });
  }

  #onDatagram(datagram: Buffer): void {
    if (!this.#open) return;
    const decoded = decodeServerPacket(datagram);
    if ('problem' in decoded) {
      this.#options.traffic.dropped += 1;
      this.#options.logger.debug(
        { event: 'battleye.dropped', reason: decoded.problem, bytes: datagram.length },
        'BattlEye RCon datagram dropped',
      );
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
        else logger.debug({ event: 'battleye.message', message: packet.body.toString('utf8') }, 'BattlEye server message');
        return;
      }
      case 'answer': {
        const pending = this.#pending.get(packet.seq);
        if (!pending) {
          if (this.#retired.has(packet.seq)) traffic.lateAnswers += 1;
          else traffic.ignoredAnswers += 1;
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
