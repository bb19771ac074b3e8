import { chmod, mkdir, open, stat } from 'node:fs/promises';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { packageFile } from '../package-files.js';
import { ConfigError } from '../errors.js';

/** The files `porter init` writes: the config, and each secret in a file of its own. */
interface SetupFiles {
  readonly dir: string;
  readonly config: unknown;
  /** File name (in `dir`) → secret. */
  readonly secrets: Readonly<Record<string, string>>;
  readonly force: boolean;
  /**
   * For a service that runs as another user (systemd's DynamicUser=): the folder 0755 and the
   * config 0644 so that user can read it; the secrets stay 0600, for root to hand over.
   */
  readonly readableConfig?: boolean;
  /** Other files (a systemd unit), written 0644; one that exists with exactly this text is no conflict. */
  readonly others?: ReadonlyArray<{ readonly path: string; readonly text: string }>;
}

/**
 * Writes the config and the secrets with mode 0600 (set again on a file that existed, whatever its
 * mode was; the config 0644 with `readableConfig`). Refuses, before writing anything, when one of
 * them exists and `force` is not set. Returns the config file's path.
 */
export async function writeSetup(files: SetupFiles): Promise<string> {
  const configPath = join(files.dir, 'config.json');
  const paths = [configPath, ...Object.keys(files.secrets).map((name) => join(files.dir, name))];
  const others = files.others ?? [];
  if (!files.force) {
    const existing = [
      ...paths.filter((path) => existsSync(path)),
      ...others.filter((file) => differs(file.path, file.text)).map((file) => file.path),
    ];
    if (existing.length > 0) {
      throw new ConfigError(
        `${existing.join(', ')} already exist${existing.length === 1 ? 's' : ''}: pass --force to replace, or --dir DIR to write elsewhere`,
      );
    }
  }
  await mkdir(files.dir, { recursive: true, mode: files.readableConfig ? 0o755 : 0o750 });
  // A folder left 0750 or 0700 (by an earlier porter init) would hide the config from the service's user.
  if (files.readableConfig) await chmod(files.dir, (await stat(files.dir)).mode | 0o755);
  for (const [name, secret] of Object.entries(files.secrets)) await writeFileMode(join(files.dir, name), `${secret}\n`, 0o600);
  const schema = packageFile('config.schema.json');
  const config = schema ? { $schema: relative(files.dir, schema) || schema, ...(files.config as object) } : files.config;
  await writeFileMode(configPath, `${JSON.stringify(config, null, 2)}\n`, files.readableConfig ? 0o644 : 0o600);
  for (const file of others) {
    await mkdir(dirname(file.path), { recursive: true, mode: 0o755 });
    await writeFileMode(file.path, file.text, 0o644);
  }
  return configPath;
}

/** Whether a file other than init's own (the unit) is there with other text: replacing it needs consent. */
export function differs(path: string, text: string): boolean {
  try {
    return readFileSync(path, 'utf8') !== text;
  } catch {
    return existsSync(path);
  }
}

async function writeFileMode(path: string, text: string, mode: number): Promise<void> {
  const file = await open(path, 'w', mode);
  try {
    // An existing file keeps its old mode through open(): set it before a secret goes in.
    await file.chmod(mode);
    await file.writeFile(text);
    await file.sync();
  } finally {
    await file.close();
  }
  if (((await stat(path)).mode & 0o777) !== mode) await chmod(path, mode);
}
