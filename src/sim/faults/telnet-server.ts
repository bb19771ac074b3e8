import type { ConsoleResult } from '../consoles/7dtd.js';
import {
  TelnetServer,
  type FakeTelnetServer as PlainTelnetServer,
  type TelnetServerOptions,
  type TelnetSession,
} from '../telnet-server.js';
import { flood } from './flood.js';

/**
 * Faults for the next command that is not a query:
 * - hang: runs it, then the session neither answers nor reads anything more (a stuck server);
 * - close-before-answer: runs it, then drops the connection without answering;
 * - close-after-answer: runs it, sends its answer, then drops the connection before the next line runs;
 * - close-without-running: drops the connection on receipt; the command does not run;
 * - flood: runs it, then sends output lines without end until the client drops the connection.
 */
type TelnetFault = 'hang' | 'close-before-answer' | 'close-after-answer' | 'close-without-running' | 'flood';

/** Overrides a command: return its result, throw to make it fail as the game's commands do, or undefined for the built-in console. */
type TelnetCommandHandler = (command: string) => ConsoleResult | undefined;

/** The 7 Days to Die console simulator with what only tests do to it; porter demo never loads it. */
export interface FakeTelnetServer extends PlainTelnetServer {
  /** Bytes written by `flood` faults. */
  readonly floodedBytes: number;
  failNext(fault: TelnetFault): void;
  setHandler(handler: TelnetCommandHandler | undefined): void;
  /** Log lines from "other threads" written before every line of every answer from now on. */
  setAnswerNoise(linesPerOutputLine: number): void;
}

/** A real warning servers log now and then, used as noise from another thread. */
const NOISE = 'Entity [type=EntityZombie, name=zombieSteve, id=34172] fell off the world, id=34172 pos=(-1683.7, -0.6, 490.3)';

export async function startTelnetServer(options: TelnetServerOptions): Promise<FakeTelnetServer> {
  const server = new FaultyTelnetServer(options);
  await server.up();
  return server;
}

class FaultyTelnetServer extends TelnetServer implements FakeTelnetServer {
  readonly #faults: TelnetFault[] = [];
  #handler: TelnetCommandHandler | undefined;
  #noise = 0;
  floodedBytes = 0;

  failNext(fault: TelnetFault): void {
    this.#faults.push(fault);
  }

  setHandler(handler: TelnetCommandHandler | undefined): void {
    this.#handler = handler;
  }

  setAnswerNoise(linesPerOutputLine: number): void {
    this.#noise = linesPerOutputLine;
  }

  override admits(session: TelnetSession, query: boolean): boolean {
    if (query || this.#faults[0] !== 'close-without-running') return true;
    this.#faults.shift();
    session.destroy();
    return false;
  }

  override ownCommand(command: string): ConsoleResult | undefined {
    return this.#handler?.(command);
  }

  override deliver(session: TelnetSession, output: readonly string[], query: boolean): void {
    const fault = query ? undefined : this.#faults.shift();
    if (fault === 'hang') return session.hang();
    if (fault === 'close-before-answer') return session.destroy();
    if (fault === 'flood') {
      session.hang();
      void flood(session.socket, `${'x'.repeat(1000)}\r\n`, (bytes) => (this.floodedBytes += bytes));
      return;
    }
    for (const line of output) {
      for (let i = 0; i < this.#noise; i += 1) this.log(NOISE, 'WRN');
      session.sendLines([line]);
    }
    if (fault === 'close-after-answer') session.destroy();
  }
}
