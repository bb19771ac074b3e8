import { randomBytes } from 'node:crypto';

/**
 * The fixed texts of the 7 Days to Die telnet console, as its TelnetConnection and SdtdConsole
 * classes write them (read in decompiled server code): every line ends in CRLF; a password is
 * asked only when TelnetPassword is set (the console then listens on loopback only without one).
 */
export const PASSWORD_PROMPT = 'Please enter password:';
export const PASSWORD_INCORRECT = 'Password incorrect, please enter password:';
/** Sent instead of PASSWORD_INCORRECT once TelnetFailedLoginLimit is reached; the server then closes. */
export const TOO_MANY_LOGINS = 'Too many failed login attempts!';
export const LOGON_SUCCESSFUL = 'Logon successful.';
/** The first banner line, which a console without a password sends at once. */
export const CONNECTED_BANNER = '*** Connected with 7DTD server.';

/**
 * A server log line: `2017-08-10T16:49:31 4187.359 INF Executing command 'lp' by Telnet from …`.
 * The console forwards the whole server log (INF, WRN, ERR, EXC) to every telnet session, from
 * any of the server's threads, so such lines may come between any two lines of an answer.
 */
const LOG_LINE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2} +\d+(?:\.\d+)? +[A-Z]{3} /;

export function isLogLine(line: string): boolean {
  return LOG_LINE.test(line);
}

/**
 * The end of an answer (docs/design.md#executors). The console marks no end, runs the commands of
 * one session in the order they came, and answers a command it does not know with one line,
 * `*** ERROR: unknown command '<first word>'`, without logging it or doing anything else. So after
 * each command porter sends a word no server knows, fresh from 128 random bits: its error line
 * closes the answer of the command before it. Buyers cannot guess it, so no text of theirs can
 * end an answer early.
 */
export interface EndMarker {
  /** The line porter sends after the command. */
  readonly command: string;
  /** The server's whole answer line to it. */
  readonly reply: string;
}

export function newEndMarker(random: (bytes: number) => Buffer = randomBytes): EndMarker {
  const command = `porter-end-${random(16).toString('hex')}`;
  return { command, reply: `*** ERROR: unknown command '${command}'` };
}

/** The console ends the session on this line (any case, surrounding blanks ignored) instead of running it. */
export function endsSession(command: string): boolean {
  return command.trim().toLowerCase() === 'exit';
}
