import { encodePacket, PacketType, SPEC_MAX_BODY_BYTES } from '../../protocols/rcon/codec.js';
import type { RconFlavour } from '../../protocols/rcon/exchange.js';
import type { SimAnswer } from '../rcon-answers.js';
import {
  RconServer,
  type FakeRconServer as PlainRconServer,
  type RconExchange,
  type RconServerOptions,
  type ExecutedCommand,
} from '../rcon-server.js';
import { flood } from './flood.js';

export type { RconServerOptions } from '../rcon-server.js';

/**
 * Faults for the next command that is not a query:
 * - hang: runs it, never answers and reads nothing more on that connection (a stuck server);
 * - close-before-answer: runs it, then drops the connection without answering;
 * - close-after-answer: runs it, answers, then closes the connection;
 * - close-without-running: drops the connection on receipt; the command does not run.
 * - flood: runs it, then sends answer fragments for it without end (never answering a probe,
 *   reading nothing more) until the client drops the connection: a broken or hostile server.
 *   Fragments carry the request id (id 0 in the id0 flavour).
 */
export type RconFault = 'hang' | 'close-before-answer' | 'close-after-answer' | 'close-without-running' | 'flood';

/** An answer a test holds back: it goes out only once `after` settles. */
interface HeldAnswer extends SimAnswer {
  readonly after: Promise<unknown>;
}

/** Overrides the answer to a command; return undefined to fall back to the built-in game semantics. */
type RconCommandHandler = (
  command: string,
  context: { readonly flavour: RconFlavour; readonly online: readonly string[] },
) => string | SimAnswer | HeldAnswer | undefined;

/** The RCON simulator with what only tests and benchmarks do to it; porter demo never loads it. */
export interface FakeRconServer extends PlainRconServer {
  /** Answer bytes (packets included) written by `flood` faults, all connections together. */
  readonly floodedBytes: number;
  failNext(kind: RconFault): void;
  setHandler(handler: RconCommandHandler | undefined): void;
  /** Answers each login only after `ms` (0: at once): a game server busy loading, or a host under load. */
  setLoginDelay(ms: number): void;
  /** Answers each login only once `until` settles (undefined: at once): a game server loading its world for as long as the test chooses. */
  holdLogins(until: Promise<void> | undefined): void;
  /** Logins received so far, answered or held. */
  readonly loginsSeen: number;
  /** Answers every command (player listings too) only after `ms` more (0: as usual): a lagging server. */
  setAnswerDelay(ms: number): void;
}

export async function startRconServer(options: RconServerOptions): Promise<FakeRconServer> {
  const server = new FaultyRconServer(options);
  await server.up();
  return server;
}

const isHeld = (answer: SimAnswer): answer is HeldAnswer => 'after' in answer;

class FaultyRconServer extends RconServer implements FakeRconServer {
  readonly #faults: RconFault[] = [];
  #handler: RconCommandHandler | undefined;
  #loginDelayMs = 0;
  #loginHold: Promise<void> | undefined;
  #answerDelayMs = 0;
  loginsSeen = 0;
  floodedBytes = 0;

  failNext(kind: RconFault): void {
    this.#faults.push(kind);
  }

  setHandler(handler: RconCommandHandler | undefined): void {
    this.#handler = handler;
  }

  setLoginDelay(ms: number): void {
    this.#loginDelayMs = ms;
  }

  holdLogins(until: Promise<void> | undefined): void {
    this.#loginHold = until;
  }

  setAnswerDelay(ms: number): void {
    this.#answerDelayMs = ms;
  }

  override async login(password: string): Promise<boolean> {
    this.loginsSeen++;
    await this.#loginHold?.catch(() => undefined);
    // Unref'd: a login held this long must not keep a test process alive once everything else closed.
    if (this.#loginDelayMs > 0) await new Promise((resolve) => setTimeout(resolve, this.#loginDelayMs).unref());
    return super.login(password);
  }

  override answerFor(command: string): SimAnswer {
    const custom = this.#handler?.(command, { flavour: this.flavour, online: this.online() });
    if (custom !== undefined) return typeof custom === 'string' ? { text: custom } : custom;
    return super.answerFor(command);
  }

  override async answerDue(answer: SimAnswer): Promise<void> {
    if (isHeld(answer)) await answer.after.catch(() => undefined);
    const delayMs = (answer.delayMs ?? 0) + this.#answerDelayMs;
    if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
  }

  override async serve(exchange: RconExchange): Promise<boolean> {
    const fault = this.isQuery(exchange.command) ? undefined : this.#faults.shift();
    if (fault === undefined) return super.serve(exchange);
    if (fault === 'close-without-running') return this.#drop(exchange);
    const { answer, ran } = exchange.run();
    if (fault === 'hang') return false;
    if (fault === 'close-before-answer') return this.#drop(exchange);
    if (fault === 'flood') {
      const fragment = encodePacket(exchange.replyId, PacketType.RESPONSE_VALUE, 'x'.repeat(SPEC_MAX_BODY_BYTES));
      await flood(exchange.socket, fragment, (bytes) => (this.floodedBytes += bytes));
      return false;
    }
    return this.#answerThenClose(exchange, ran, answer);
  }

  #drop(exchange: RconExchange): false {
    exchange.socket.destroy();
    return false;
  }

  async #answerThenClose(exchange: RconExchange, ran: ExecutedCommand, answer: SimAnswer): Promise<false> {
    if (await this.reply(exchange, ran, answer)) exchange.socket.destroySoon();
    return false;
  }
}
