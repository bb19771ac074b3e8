import { Buffer } from 'node:buffer';
import type { Logger } from 'pino';
import { systemClock } from '../../clock.js';
import { CommandFailedError, CredentialsError, NotSentError, OutcomeUnknownError, PorterError } from '../../errors.js';
import { TSHOCK_PLAYER_LIST_ROUTE } from '../../games/terraria.js';
import { excerpt } from '../../games/text.js';
import { ReconnectingLink } from '../../net/reconnecting-link.js';
import { scrubSecrets } from '../../scrub.js';
import { AnswerTooLargeError, MAX_ANSWER_BYTES } from '../answer-limit.js';
import { assertSingleLine, type Executor } from '../executor.js';
import { executorLink, LinkedExecutor, type LinkedExecutorDeps } from '../linked-executor.js';
import { rawCommandPath, routePath, TOKEN_TEST_ROUTE, tshockCommandText, tshockOrigin } from './address.js';
import { RequestNotSent, RequestUnanswered, TShockHttp } from './http.js';
import { commandOutput, readReply, type TShockReply } from './reply.js';
import type { ResolvedOf } from '../transport-descriptor.js';
import type { tshockTransport } from './descriptor.js';

export type TShockExecutorConfig = ResolvedOf<typeof tshockTransport>;

/** An answer past the token check: a refused token is thrown as CredentialsError instead. */
type TokenAccepted = Exclude<TShockReply, { kind: 'rejected' }>;

/** TShock's REST API could not be reached, or what answered is not it. Retried with backoff. */
export class TShockConnectError extends PorterError {
  override readonly code = 'E_TSHOCK_CONNECT';
}

/** The backoff paces re-checks of the token after the server was lost; 250 ms doubling to 10 s by default. */
type TShockExecutorDeps = LinkedExecutorDeps;

/**
 * The most body porter reads for one answer: an answer at MAX_ANSWER_BYTES with room for its JSON
 * (TShock indents it, and quotes and backslashes double in size when escaped).
 */
const MAX_BODY_BYTES = 2 * MAX_ANSWER_BYTES;

/**
 * HTTP keeps no connection to stand for "connected", so a checked token does: a session opens when
 * `/tokentest` accepts the token and ends when a request finds the server gone (or silent), or the
 * token refused. While it is ended, commands are not sent and the link checks again with backoff.
 */
class TokenSession {
  #open = true;
  #onEnd: (reason: string) => void = () => {};

  get isOpen(): boolean {
    return this.#open;
  }

  onEnd(listener: (reason: string) => void): void {
    this.#onEnd = listener;
  }

  end(reason: string): void {
    if (!this.#open) return;
    this.#open = false;
    this.#onEnd(reason);
  }
}

/**
 * Terraria through TShock's REST API (docs/design.md#executors): `GET /v3/server/rawcmd` runs a
 * command as the token's user and answers with the lines it printed; `/v2/players/list` lists
 * players. One request at a time (TShock runs a REST command on its HTTP thread, beside the game),
 * each with the token in its query, as TShock reads it. The outcome errors follow the Executor
 * contract: NotSentError when the connect failed, OutcomeUnknownError once sent without an answer
 * TShock wrote (never resent), CommandFailedError when TShock refused the request before running
 * it, CredentialsError when it refused the token.
 */
export class TShockExecutor extends LinkedExecutor<TokenSession, TShockExecutorConfig> implements Executor {
  get connectedText(): string {
    return `TShock REST token accepted by ${this.#origin}`;
  }

  readonly #origin: string;
  protected readonly logger: Logger;
  protected readonly over = 'TShock REST';
  readonly #http: TShockHttp;
  protected readonly link: ReconnectingLink<TokenSession>;
  /** The token as it appears in a path (once and twice encoded), scrubbed from server texts besides the token itself. */
  readonly #secrets: readonly string[];
  readonly #scrub = (text: string): string => scrubSecrets(text, this.#secrets);

  constructor(config: TShockExecutorConfig, deps: TShockExecutorDeps) {
    super(config);
    this.#origin = tshockOrigin(config.host, config.port);
    this.logger = deps.logger.child({ executor: 'tshock', address: this.#origin });
    const clock = deps.clock ?? systemClock;
    const once = encodeURIComponent(config.password);
    this.#secrets = [config.password, once, encodeURIComponent(once)];
    this.#http = new TShockHttp({ origin: this.#origin, connectTimeoutMs: config.connectTimeoutMs, clock, maxBodyBytes: MAX_BODY_BYTES });
    this.link = executorLink<TokenSession>(
      {
        open: (signal) => this.#checkToken(signal),
        isOpen: (session) => session.isOpen,
        watch: (session, ended) => session.onEnd(ended),
        drop: (session) => session.end('porter closed the TShock executor'),
        release: (session) => session.end('porter closed the TShock executor'),
      },
      {
        subject: `the TShock REST API at ${this.#origin}`,
        ConnectError: TShockConnectError,
        connected: 'TShock REST API reachable and token accepted',
        reconnected: 'TShock REST API reachable again and token accepted',
        lost: 'TShock REST API lost; checking the token again until it answers',
        retrying: 'TShock REST API still unreachable; retrying with backoff',
        refused: 'TShock REST token rejected; not retrying until the configuration is fixed',
      },
      { deps, logger: this.logger, clock },
    );
  }

  /** Runs a delivery command; the answer is the lines TShock sent back, one per line. */
  protected async sendCommand(command: string, signal?: AbortSignal): Promise<string> {
    assertSingleLine(command);
    return this.#runCommand(command, signal);
  }

  /**
   * Runs a console command and returns its lines; `/v2/players/list` (what the terraria game
   * asks) is read from that route instead and returned as its JSON.
   */
  async query(command: string, signal?: AbortSignal): Promise<string> {
    assertSingleLine(command);
    if (command !== TSHOCK_PLAYER_LIST_ROUTE) return this.#runCommand(command, signal);
    const reply = await this.#request(routePath(TSHOCK_PLAYER_LIST_ROUTE, this.config.password), signal);
    if (reply.kind === 'ok') return JSON.stringify(reply.object, null, 2);
    throw this.#notDone(reply, 'the player list');
  }

  /** Once the link is closed and the lane idle: the HTTP client's sockets. */
  protected override async closed(): Promise<void> {
    await this.#http.close();
  }

  async #runCommand(command: string, signal: AbortSignal | undefined): Promise<string> {
    const reply = await this.#request(rawCommandPath(tshockCommandText(command), this.config.password), signal);
    if (reply.kind !== 'ok') throw this.#notDone(reply, 'the command');
    const lines = commandOutput(reply.object);
    if (lines === undefined) {
      throw new OutcomeUnknownError(
        `TShock REST at ${this.#origin} answered status 200 without the command's output ("response"); ` +
          'the command was sent, so whether it ran is unknown and it is not sent again',
      );
    }
    const answer = lines.join('\n');
    if (Buffer.byteLength(answer, 'utf8') > MAX_ANSWER_BYTES)
      throw new AnswerTooLargeError(`TShock REST at ${this.#origin}`, MAX_ANSWER_BYTES);
    return answer;
  }

  /** One request through the lane, once the token was accepted; the answer as TShock meant it. */
  #request(path: string, signal: AbortSignal | undefined): Promise<TokenAccepted> {
    const words = {
      notConnected: `TShock REST at ${this.#origin} is not reachable (porter is checking again); the command was not sent`,
      cancelledWaiting: 'the command was cancelled while waiting for the TShock REST API; it was not sent',
    };
    return this.inTurn(words, signal, (session) => this.#send(session, path, signal));
  }

  async #send(session: TokenSession, path: string, signal: AbortSignal | undefined): Promise<TokenAccepted> {
    let answer;
    try {
      answer = await this.#http.get(path, this.config.timeoutMs, signal);
    } catch (error) {
      if (error instanceof RequestNotSent) {
        session.end(`a request could not be sent: ${error.why}`);
        throw new NotSentError(`TShock REST at ${this.#origin} could not be reached (${error.why}); the command was not sent`);
      }
      if (error instanceof RequestUnanswered) {
        if (error.kind === 'too-large') throw new AnswerTooLargeError(`TShock REST at ${this.#origin}`, MAX_BODY_BYTES);
        session.end(`a request got no answer: ${error.why}`);
        const hint = error.kind === 'timeout' ? ' (servers[].executor.timeoutMs)' : '';
        throw new OutcomeUnknownError(
          `TShock REST at ${this.#origin} gave no answer: ${error.why}${hint}; the command was sent, so whether it ran is unknown and it is not sent again`,
        );
      }
      throw error;
    }
    const reply = readReply(answer.status, answer.body);
    if (reply.kind === 'rejected') {
      session.end('the token was rejected');
      throw this.#tokenRejected(reply.status, reply.reason);
    }
    return reply;
  }

  /** The session behind every request: `/tokentest` proves the server is there and takes the token. */
  async #checkToken(signal: AbortSignal): Promise<TokenSession> {
    let answer;
    try {
      answer = await this.#http.get(routePath(TOKEN_TEST_ROUTE, this.config.password), this.config.timeoutMs, signal);
    } catch (error) {
      if (!(error instanceof RequestNotSent || error instanceof RequestUnanswered)) throw error;
      throw new TShockConnectError(
        `TShock REST at ${this.#origin} could not be reached (${error.why}): is TShock running with "RestApiEnabled": true ` +
          `and "RestApiPort": ${this.config.port} in tshock/config.json, and is that port reachable from here?`,
      );
    }
    const reply = readReply(answer.status, answer.body);
    switch (reply.kind) {
      case 'ok':
        return new TokenSession();
      case 'rejected':
        throw this.#tokenRejected(reply.status, reply.reason);
      default:
        throw new TShockConnectError(
          `${this.#origin} answered ${TOKEN_TEST_ROUTE} with ${describeReply(reply, this.#scrub)}, not as TShock's REST API does: ` +
            `check host and port against "RestApiPort" in tshock/config.json`,
        );
    }
  }

  #tokenRejected(status: string, reason: string): CredentialsError {
    const said = reason === '' ? '' : `: ${this.#scrub(reason)}`;
    return new CredentialsError(
      `TShock REST at ${this.#origin} rejected the token (status ${status}${said}); set servers[].executor.password ` +
        '(or passwordFile, or PORTER_RCON_PASSWORD) to a key of "ApplicationRestTokens" in tshock/config.json whose group ' +
        'has the tshock.rest.command permission and the permissions of the commands the store runs',
    );
  }

  /** The error for an answer that is not "done". */
  #notDone(reply: Exclude<TokenAccepted, { kind: 'ok' }>, what: string): Error {
    switch (reply.kind) {
      case 'refused':
        return new CommandFailedError(
          `TShock REST at ${this.#origin} refused ${what} before running it (${describeReply(reply, this.#scrub)})`,
        );
      case 'server-error':
        return new OutcomeUnknownError(
          `TShock REST at ${this.#origin} failed while handling ${what} (${describeReply(reply, this.#scrub)}); ` +
            'it may have run in part, so it is not sent again',
        );
      case 'unreadable':
        return new OutcomeUnknownError(
          `TShock REST at ${this.#origin} answered ${what} with ${describeReply(reply, this.#scrub)}, which is not TShock's JSON; ` +
            'it was sent, so whether it ran is unknown and it is not sent again; check that host and port are TShock\'s "RestApiPort"',
        );
    }
  }
}

function describeReply(reply: Exclude<TShockReply, { kind: 'ok' }>, scrub: (text: string) => string): string {
  if (reply.kind === 'unreadable') return `HTTP ${reply.httpStatus} and a body that is not a TShock status object`;
  // Server texts go into fail reasons and logs: one line, and short.
  return reply.reason === '' ? `status ${reply.status}` : `status ${reply.status}: ${scrub(excerpt(reply.reason, 300))}`;
}
