import {
  CONNECTED_BANNER,
  LOGON_SUCCESSFUL,
  newEndMarker,
  PASSWORD_INCORRECT,
  PASSWORD_PROMPT,
  TOO_MANY_LOGINS,
  type EndMarker,
} from './console-text.js';

type LoginStep =
  | { readonly kind: 'wait' }
  /** Send this line (CRLF is added by the connection). */
  | { readonly kind: 'write'; readonly line: string }
  | { readonly kind: 'ready' }
  | { readonly kind: 'rejected'; readonly reason: 'incorrect' | 'too-many' };

/**
 * The console's login, line by line. The password goes out only when the console asks for it
 * (a console without TelnetPassword never does, and would run the password as a command). Once
 * in, porter sends one end marker and waits for its reply: the banner and any log lines before
 * it are then behind, so the first command's answer starts clean, and the console has shown it
 * runs commands for this session.
 */
export class ConsoleLogin {
  readonly #password: string;
  readonly #newMarker: () => EndMarker;
  #passwordSent = false;
  #marker: EndMarker | undefined;

  constructor(password: string, newMarker: () => EndMarker = newEndMarker) {
    this.#password = password;
    this.#newMarker = newMarker;
  }

  get passwordSent(): boolean {
    return this.#passwordSent;
  }

  take(line: string): LoginStep {
    if (this.#marker) return line === this.#marker.reply ? { kind: 'ready' } : { kind: 'wait' };
    if (line === PASSWORD_INCORRECT) return { kind: 'rejected', reason: 'incorrect' };
    if (line === TOO_MANY_LOGINS) return { kind: 'rejected', reason: 'too-many' };
    if (line === PASSWORD_PROMPT && !this.#passwordSent) {
      this.#passwordSent = true;
      return { kind: 'write', line: this.#password };
    }
    if ((line === LOGON_SUCCESSFUL && this.#passwordSent) || (line === CONNECTED_BANNER && !this.#passwordSent)) {
      this.#marker = this.#newMarker();
      return { kind: 'write', line: this.#marker.command };
    }
    return { kind: 'wait' };
  }
}
