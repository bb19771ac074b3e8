/**
 * Named error classes with stable codes, in the style of undici/lib/core/errors.js.
 * The CLI maps `exitCode` to the process exit status (DESIGN §5): 78 for configuration and
 * credential errors, 1 for everything else.
 */
export class PorterError extends Error {
  readonly code: string = 'E_PORTER';
  readonly exitCode: number = 1;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** The configuration is wrong: the message names the key and what was expected. Exit 78. */
export class ConfigError extends PorterError {
  override readonly code: string = 'E_CONFIG';
  override readonly exitCode = 78;
}

/** The store or the game server refused our credentials (401, 403, RCON auth). Exit 78. */
export class CredentialsError extends PorterError {
  override readonly code: string = 'E_CREDENTIALS';
  override readonly exitCode = 78;
}

export function exitCodeOf(error: unknown): number {
  return error instanceof PorterError ? error.exitCode : 1;
}
