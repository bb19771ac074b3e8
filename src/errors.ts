/**
 * Named error classes with stable codes, in the style of undici/lib/core/errors.js.
 * The CLI maps `exitCode` to the process exit status (docs/design.md#cli-and-exit-codes): 78 for configuration and
 * credential errors, 64 for a flag value a command cannot use, 1 for everything else.
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

/** A command-line flag (or query parameter) has a value porter cannot use: EX_USAGE, exit 64. */
export class UsageError extends PorterError {
  override readonly code: string = 'E_USAGE';
  override readonly exitCode = 64;
}

/** A configuration or credential error: the daemon stops with 78 instead of retrying. */
export function isConfigurationError(error: unknown): boolean {
  return error instanceof PorterError && error.exitCode === 78;
}

/**
 * What went wrong, in words, whatever was thrown: an Error's message, the message of anything
 * shaped like one (an Error from another realm), and otherwise the thrown value as text, where
 * `(error as Error).message` would have given undefined.
 */
export function messageOf(error: unknown): string {
  if (error instanceof Error) return error.message;
  const message = typeof error === 'object' && error !== null ? (error as { message?: unknown }).message : undefined;
  return typeof message === 'string' ? message : String(error);
}

export function exitCodeOf(error: unknown): number {
  return error instanceof PorterError ? error.exitCode : 1;
}

/*
 * What became of a command an executor was given, in the terms the delivery loop decides on
 * (docs/design.md#delivery-semantics). They live here, at the bottom, because the transports that
 * raise them and the loop that reads them sit in different layers.
 */

// The codes are typed `string` so that a subclass can name its case more precisely and still be
// handled as its parent by the delivery loop.
export class CommandRefusedError extends PorterError {
  override readonly code: string = 'E_COMMAND_REFUSED';
}

export class NotSentError extends PorterError {
  override readonly code: string = 'E_NOT_SENT';
}

export class OutcomeUnknownError extends PorterError {
  override readonly code: string = 'E_OUTCOME_UNKNOWN';
}

export class CommandFailedError extends PorterError {
  override readonly code = 'E_COMMAND_FAILED';
}
