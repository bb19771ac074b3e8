import { ConfigError } from '../errors.js';

/**
 * The configuration file has one or more problems. Each entry of `problems` is one line that names
 * the key the way a user writes it (`servers[0].executor.port`) and what was expected, so `porter
 * check` and the CLI can list them all at once instead of making the user fix them one run at a time.
 */
export class ConfigInvalidError extends ConfigError {
  override readonly code = 'E_CONFIG_INVALID';
  readonly file: string;
  readonly problems: readonly string[];

  constructor(file: string, problems: readonly string[]) {
    const count = problems.length === 1 ? '1 problem' : `${problems.length} problems`;
    super(`Invalid configuration in ${file} (${count}):\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.file = file;
    this.problems = problems;
  }
}
