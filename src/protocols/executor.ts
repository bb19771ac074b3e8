import { CommandRefusedError } from '../errors.js';

/**
 * What the delivery loop needs from anything that runs commands on a game server, whatever its
 * transport (protocols/transport-registry.ts lists them). The outcome of `execute` is one of:
 * - resolves with the game's answer: the command ran (failure patterns are checked by the loop);
 * - rejects with CommandRefusedError: refused before sending (report failed, never sent);
 * - rejects with NotSentError: provably never reached the game server (may be tried again);
 * - rejects with OutcomeUnknownError: sent, but no answer (report failed as unknown, never resend);
 * - rejects with CommandFailedError: ran and failed (script exit status ≠ 0);
 * - rejects with CredentialsError (src/errors.ts): the game server refused our password.
 */
export interface Executor {
  /**
   * What a successful `connect()` proved, in words for `porter check`, e.g. "RCON (minecraft)
   * login to 127.0.0.1:25575 accepted" or "script /usr/local/bin/deliver is executable".
   */
  readonly connectedText: string;
  /** Connects and authenticates. Rejects with CredentialsError on a wrong password. */
  connect(signal?: AbortSignal): Promise<void>;
  /** True while commands can be sent now (scripts are always ready). */
  isReady(): boolean;
  /** Resolves once ready (reconnecting with backoff meanwhile), rejects when the signal aborts or credentials are rejected. */
  waitReady(signal?: AbortSignal): Promise<void>;
  execute(command: string, context: ExecutionContext, signal?: AbortSignal): Promise<string>;
  /** Runs a read-only query (e.g. `list`) and returns the answer; same errors as execute. */
  query(command: string, signal?: AbortSignal): Promise<string>;
  /** Counters for health and metrics. */
  stats(): ExecutorStats;
  close(): Promise<void>;
}

export interface ExecutionContext {
  /** Command id, exact int64 digits. */
  readonly id: string;
  readonly serverId: string;
}

export interface ExecutorStats {
  readonly connected: boolean;
  readonly reconnects: number;
}

/** CR, LF and NUL would let a buyer's nickname start a second command (docs/design.md#command-safety). */
export function assertSingleLine(command: string): void {
  if (/[\r\n\0]/.test(command)) {
    throw new CommandRefusedError('command contains CR, LF or NUL and was not sent (it could start a second command)');
  }
}
