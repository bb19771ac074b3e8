import { createServer, type Server, type Socket } from 'node:net';
import { StringDecoder } from 'node:string_decoder';
import {
  isKnownCommand,
  isQueryRoot,
  runConsoleCommand,
  SevenDaysWorld,
  tokenize,
  type ConsoleResult,
  type SevenDaysJoin,
} from './consoles/7dtd.js';
import { SimListener, type SimPlace } from './sim-listener.js';

/**
 * A fake 7 Days to Die telnet console on 127.0.0.1 for `porter demo`, `porter sim` and the tests
 * (which play faults on it through src/sim/faults/telnet-server.ts). It copies the
 * server's TelnetConnection and SdtdConsole classes (decompiled server code): every line written
 * ends in CRLF; `Please enter password:` when TelnetPassword is set, then `Logon successful.` and
 * the banner ending `Press 'help' to get a list of all commands. Press 'exit' to end session.`, or
 * `Password incorrect, please enter password:` (the connection stays open) until
 * TelnetFailedLoginLimit failures from one address, then `Too many failed login attempts!` and a
 * close. Input lines end at CR or LF and are trimmed; blank ones are skipped; `exit` ends the
 * session. Commands run one per frame, in the order they came, each answered with its output lines
 * in one piece and no end marker; a known command is first logged as `Executing command '<cmd>' by
 * Telnet from <ip:port>` unless HideCommandExecutionLog is 1 or more; an unknown one is answered
 * `*** ERROR: unknown command '<word>'` and not logged; one that throws is answered
 * `*** ERROR: Executing command '<word>' failed: <message>`. The whole server log goes to every
 * session that logged in, as `<time> <uptime> INF|WRN|ERR|EXC <text>` lines; a session that has
 * not logged in gets a NUL byte for each log line instead.
 */

export interface TelnetServerOptions extends SimPlace {
  /** TelnetPassword; empty: no login is asked, as on a console without a password. */
  readonly password: string;
  /** Players online at start: names, or names with their platform and cross-platform ids. */
  readonly players?: readonly (string | SevenDaysJoin)[];
  /** serverconfig.xml HideCommandExecutionLog: 1 and up hide the `Executing command` line from telnet. */
  readonly hideCommandExecutionLog?: number;
  /** TelnetFailedLoginLimit (10 in the default serverconfig.xml). */
  readonly failedLoginLimit?: number;
}

export interface ExecutedTelnetCommand {
  readonly command: string;
  readonly at: number;
  /** Changes nothing: a listing, or a command the console does not know. Skip it when counting deliveries. */
  readonly query: boolean;
  /** Which TCP connection (1, 2, …) it came in on. */
  readonly connection: number;
}

/** One telnet session, as the seams src/sim/faults/ overrides see it. */
export interface TelnetSession {
  readonly socket: Socket;
  /** Writes each line with CRLF, unless the session hangs. */
  sendLines(lines: readonly string[]): void;
  /** From now on the session neither writes nor reads anything (a stuck server). */
  hang(): void;
  destroy(): void;
}

export interface FakeTelnetServer {
  readonly host: string;
  readonly port: number;
  readonly world: SevenDaysWorld;
  /** Every command line the console took, in order (queries flagged). */
  readonly executed: ExecutedTelnetCommand[];
  readonly connections: number;
  readonly totalConnections: number;
  /** Wrong passwords received. */
  readonly authFailures: number;
  online(): string[];
  join(player: string | SevenDaysJoin): void;
  leave(name: string): void;
  setPassword(password: string): void;
  setHideCommandExecutionLog(level: number): void;
  /** Writes a line to the server log (and so to every logged-in session). */
  log(text: string, level?: 'INF' | 'WRN' | 'ERR' | 'EXC'): void;
  /** Stops listening and drops every connection, keeping state: the game server is down. */
  down(): Promise<void>;
  up(): Promise<void>;
  restart(): Promise<void>;
  close(): Promise<void>;
}

const BANNER = [
  '*** Connected with 7DTD server.',
  '*** Server version: V 1.0 (b333) Compatibility Version: V 1.0',
  '',
  'Server IP:   Any',
  'Server port: 26900',
  'Max players: 8',
  'Game mode:   GameModeSurvival',
  'World:       Navezgane',
  'Game name:   porter-sim',
  'Difficulty:  2',
  '',
  "Press 'help' to get a list of all commands. Press 'exit' to end session.",
  '',
];

export async function startTelnetServer(options: TelnetServerOptions): Promise<FakeTelnetServer> {
  const server = new TelnetServer(options);
  await server.up();
  return server;
}

/**
 * The console. `ownCommand`, `admits` and `deliver` are the seams src/sim/faults/telnet-server.ts
 * overrides to answer a test's commands, play faults and add noise.
 */
export class TelnetServer extends SimListener<TelnetServerOptions> implements FakeTelnetServer {
  readonly world = new SevenDaysWorld();
  readonly executed: ExecutedTelnetCommand[] = [];
  readonly #startedAt: number;
  readonly #sessions = new Set<SimSession>();
  readonly #failedLogins = new Map<string, number>();
  readonly #queue: Array<{ session: SimSession; command: string }> = [];
  #frameScheduled = false;
  #password: string;
  #hideLog: number;
  totalConnections = 0;

  constructor(options: TelnetServerOptions) {
    super(options, 'fake telnet server');
    this.#password = options.password;
    this.#hideLog = options.hideCommandExecutionLog ?? 0;
    this.#startedAt = this.now();
    for (const player of options.players ?? []) this.world.join(typeof player === 'string' ? { name: player } : player);
  }

  get connections(): number {
    return this.#sessions.size;
  }

  get password(): string {
    return this.#password;
  }

  get failedLoginLimit(): number {
    return this.options.failedLoginLimit ?? 10;
  }

  online(): string[] {
    return this.world.list().map((p) => p.name);
  }

  join(player: string | SevenDaysJoin): void {
    const line = this.world.join(typeof player === 'string' ? { name: player } : player);
    if (line) this.log(line);
  }

  leave(name: string): void {
    const line = this.world.leave(name);
    if (line) this.log(line);
  }

  setPassword(password: string): void {
    this.#password = password;
  }

  setHideCommandExecutionLog(level: number): void {
    this.#hideLog = level;
  }

  log(text: string, level: 'INF' | 'WRN' | 'ERR' | 'EXC' = 'INF'): void {
    const now = this.now();
    const stamp = new Date(now).toISOString().slice(0, 19);
    const uptime = ((now - this.#startedAt) / 1000).toFixed(3);
    const line = `${stamp} ${uptime} ${level} ${text}`;
    this.options.logger?.trace({ event: 'fake.log', line }, 'fake 7DTD server log');
    for (const session of this.#sessions) session.sendLog(line);
  }

  protected newServer(): Server {
    return createServer((socket) => this.#accept(socket));
  }

  protected override dropConnections(): void {
    for (const session of this.#sessions) session.destroy();
    this.#sessions.clear();
  }

  /** A line a logged-in session submitted: queued for the next frame, as SdtdConsole.ExecuteAsync does. */
  submit(session: SimSession, command: string): void {
    const tokens = tokenize(command);
    const root = Array.isArray(tokens) ? (tokens[0] ?? '') : '';
    if (!this.admits(session, !isKnownCommand(root) || isQueryRoot(root))) return;
    this.#queue.push({ session, command });
    this.#scheduleFrame();
  }

  /** Whether a submitted line is queued (`query`: it changes nothing); the console takes every one. */
  admits(_session: TelnetSession, _query: boolean): boolean {
    return true;
  }

  /** A command this server answers its own way (throw: it fails), before the console's; none here. */
  ownCommand(_command: string): ConsoleResult | undefined {
    return undefined;
  }

  /** Sends a known command's output (`query`: a command that changes nothing), one line at a time. */
  deliver(session: TelnetSession, output: readonly string[], _query: boolean): void {
    for (const line of output) session.sendLines([line]);
  }

  /** Checks a password; false answers are counted per address, as TelnetConsole.RegisterFailedLogin does. */
  checkPassword(address: string, password: string): 'ok' | 'incorrect' | 'too-many' {
    if (password === this.#password) return 'ok';
    this.authFailures += 1;
    const failures = (this.#failedLogins.get(address) ?? 0) + 1;
    this.#failedLogins.set(address, failures);
    return failures < this.failedLoginLimit ? 'incorrect' : 'too-many';
  }

  #accept(socket: Socket): void {
    this.totalConnections += 1;
    const session = new SimSession(this, socket, this.totalConnections, this.#password === '');
    this.#sessions.add(session);
    socket.on('close', () => this.#sessions.delete(session));
    if (this.#password === '') session.sendLines(BANNER);
    else session.sendLines(['Please enter password:']);
  }

  loggedIn(session: SimSession): void {
    session.sendLines(['Logon successful.', '', '', '', ...BANNER]);
  }

  #scheduleFrame(): void {
    if (this.#frameScheduled) return;
    this.#frameScheduled = true;
    setImmediate(() => {
      this.#frameScheduled = false;
      const next = this.#queue.shift();
      if (next) this.#execute(next.session, next.command);
      if (this.#queue.length > 0) this.#scheduleFrame();
    });
  }

  #execute(session: SimSession, command: string): void {
    const tokens = tokenize(command);
    if (!Array.isArray(tokens)) {
      this.#record(session, command, true);
      session.sendOutput([tokens.error]);
      return;
    }
    const [root = '', ...params] = tokens;
    let result: ConsoleResult | undefined;
    let failure: Error | undefined;
    try {
      result = this.ownCommand(command);
    } catch (error) {
      failure = error as Error;
    }
    const known = result !== undefined || failure !== undefined || isKnownCommand(root);
    const query = !known || (result === undefined && failure === undefined && isQueryRoot(root));
    this.#record(session, command, query);
    if (!known) {
      session.sendOutput([`*** ERROR: unknown command '${root}'`]);
      return;
    }
    if (this.#hideLog < 1) this.log(`Executing command '${command}' by Telnet from ${session.remote}`);
    if (result === undefined && failure === undefined) result = runConsoleCommand(root, params, this.world);
    for (const line of result?.logs ?? []) this.log(line);
    const output = [...(result?.output ?? [])];
    if (failure) {
      output.push(`*** ERROR: Executing command '${root}' failed: ${failure.message}`);
      this.log(`${failure.name}: ${failure.message}`, 'EXC');
    }
    this.deliver(session, output, query);
  }

  #record(session: SimSession, command: string, query: boolean): void {
    this.executed.push({ command, at: this.now(), query, connection: session.number });
    this.options.logger?.debug({ event: 'fake.command', command, connection: session.number }, 'fake 7DTD console ran a command');
  }
}

/** One telnet session, like TelnetConnection: reads lines, logs in, writes lines with CRLF. */
class SimSession implements TelnetSession {
  readonly #server: TelnetServer;
  readonly socket: Socket;
  readonly number: number;
  readonly remote: string;
  readonly #decoder = new StringDecoder('utf8');
  #line = '';
  #authed: boolean;
  #hung = false;

  constructor(server: TelnetServer, socket: Socket, number: number, authed: boolean) {
    this.#server = server;
    this.socket = socket;
    this.number = number;
    this.#authed = authed;
    this.remote = `${socket.remoteAddress ?? '?'}:${socket.remotePort ?? 0}`;
    socket.setNoDelay(true);
    socket.on('error', () => socket.destroy());
    socket.on('data', (chunk: Buffer) => this.#onData(chunk));
  }

  sendLines(lines: readonly string[]): void {
    if (this.#hung || this.socket.destroyed || !this.socket.writable) return;
    this.socket.write(lines.map((line) => `${line}\r\n`).join(''), 'utf8');
  }

  /** An answer, one line at a time. */
  sendOutput(lines: readonly string[]): void {
    for (const line of lines) this.sendLines([line]);
  }

  sendLog(line: string): void {
    if (this.#hung || this.socket.destroyed || !this.socket.writable) return;
    // TelnetConnection.SendLine queues null for a session not logged in, written as one NUL byte.
    if (this.#authed) this.sendLines([line]);
    else this.socket.write(Buffer.from([0]));
  }

  hang(): void {
    this.#hung = true;
  }

  destroy(): void {
    this.socket.destroy();
  }

  #onData(chunk: Buffer): void {
    if (this.#hung) return;
    for (const c of this.#decoder.write(chunk)) {
      if (c === '\r' || c === '\n') {
        if (!this.#submit()) return;
      } else {
        this.#line += c;
      }
    }
  }

  /** False once the session ended. */
  #submit(): boolean {
    const text = this.#line.trim();
    this.#line = '';
    if (text === '') return true;
    if (!this.#authed) {
      const verdict = this.#server.checkPassword(this.socket.remoteAddress ?? '?', text);
      if (verdict === 'ok') {
        this.#authed = true;
        this.#server.loggedIn(this);
      } else if (verdict === 'incorrect') {
        this.sendLines(['Password incorrect, please enter password:']);
      } else {
        this.sendLines(['Too many failed login attempts!']);
        this.socket.end();
        return false;
      }
      return true;
    }
    if (text.toLowerCase() === 'exit') {
      this.socket.end();
      return false;
    }
    this.#server.submit(this, text);
    return true;
  }
}
