import { exitCodeOf } from '../errors.js';
import { scrubbedOrWithheld } from '../scrub.js';
import type { SecretBook } from '../secret-book.js';

/**
 * What Node prints for an error nobody caught (an exception, a rejected promise, the command's own
 * promise) is the error as it is: its message, its stack, any property, with every secret in it.
 * The scrubber once threw inside porter's own error path, and Node printed its error, which quoted
 * every secret. So porter prints the last word itself: the stack scrubbed, or withheld whole
 * should scrubbing fail, and exits with the error's code (1 for a bug).
 */
export function lastResort(secrets: Pick<SecretBook, 'scrub'>, stderr: { write(text: string): unknown }): (error: unknown) => number {
  return (error) => {
    let text: string;
    try {
      text = error instanceof Error ? (error.stack ?? `${error.name}: ${error.message}`) : String(error);
    } catch {
      text = 'an error whose text cannot be read';
    }
    stderr.write(`porter: unexpected error, please report it: ${scrubbedOrWithheld(secrets.scrub, text)}\n`);
    return exitCodeOf(error);
  };
}

/** Installs the last resort for the whole process. Unhandled rejections reach it too (Node's default turns them into exceptions). */
export function installLastResort(secrets: Pick<SecretBook, 'scrub'>): void {
  const report = lastResort(secrets, process.stderr);
  process.on('uncaughtException', (error) => {
    process.exit(report(error));
  });
}
