import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { waitFor } from './wait-for.js';

/**
 * A real terminal driven as a person would: a program runs in a detached tmux pane, the test
 * reads the screen (capture-pane) and types (send-keys). Each terminal has its own tmux server
 * socket, so parallel tests never share one, and `close()` kills it.
 */
export class Terminal {
  readonly #socket = `porter-test-${randomBytes(6).toString('hex')}`;
  readonly #exitDir = mkdtempSync(join(tmpdir(), 'porter-tty-exit-'));
  readonly #exitFile = join(this.#exitDir, 'status');

  /**
   * Starts the Node.js program `args` (no shell) in an 120×40 pane with `env` added to the
   * environment and the variables `unset` taken out of it (the pane inherits this process's).
   * `XDG_RUNTIME_DIR` is a folder of the terminal's own unless `env` names one, so that a `porter
   * sim` running for whoever runs the tests is never offered to `porter init` here.
   */
  constructor(args: readonly string[], env: Readonly<Record<string, string>>, cwd: string, unset: readonly string[] = []) {
    const vars = Object.entries({ XDG_RUNTIME_DIR: this.#exitDir, ...env, PORTER_TEST_EXIT_FILE: this.#exitFile }).flatMap(
      ([key, value]) => ['-e', `${key}=${value}`],
    );
    const preload = new URL('./record-exit.js', import.meta.url).href;
    const inherited = Object.fromEntries(Object.entries(process.env).filter(([key]) => !unset.includes(key)));
    this.#tmux(
      ['new-session', '-d', '-s', 'porter', '-x', '120', '-y', '40', '-c', cwd, ...vars, process.execPath, '--import', preload, ...args],
      inherited,
    );
    // Keep the screen after the program ends, so its last words can be read.
    this.#tmux(['set-option', '-t', 'porter', 'remain-on-exit', 'on']);
  }

  #tmux(args: readonly string[], env: NodeJS.ProcessEnv = process.env): string {
    return execFileSync('tmux', ['-L', this.#socket, ...args], { encoding: 'utf8', env });
  }

  /** The screen's text; with `escapes`, the escape sequences of its colours and attributes too. */
  screen(options: { readonly escapes?: boolean } = {}): string {
    return this.#tmux(['capture-pane', '-p', '-J', ...(options.escapes ? ['-e'] : []), '-t', 'porter', '-S', '-200']);
  }

  /** Types literal text (no key names interpreted). */
  type(text: string): void {
    this.#tmux(['send-keys', '-t', 'porter', '-l', text]);
  }

  /** Presses keys by tmux name: Enter, Down, BSpace, C-c… */
  press(...keys: string[]): void {
    this.#tmux(['send-keys', '-t', 'porter', ...keys]);
  }

  /** Waits until the screen shows `pattern` (after `after` characters of it, to skip older text). */
  async waitFor(pattern: RegExp, what: string, after = 0): Promise<string> {
    let screen = '';
    try {
      await waitFor(
        () => {
          screen = this.screen();
          return pattern.test(screen.slice(after));
        },
        { timeoutMs: 30_000, intervalMs: 50, what },
      );
    } catch (error) {
      throw new Error(`${(error as Error).message}; the screen:\n${screen}`);
    }
    return screen;
  }

  /** The program's exit status once it ended, else undefined. */
  exitStatus(): number | undefined {
    try {
      const text = readFileSync(this.#exitFile, 'utf8');
      return /^\d+$/.test(text) ? Number(text) : undefined;
    } catch {
      return undefined;
    }
  }

  close(): void {
    try {
      this.#tmux(['kill-server']);
    } catch {
      // already gone
    }
    rmSync(this.#exitDir, { recursive: true, force: true });
  }
}
