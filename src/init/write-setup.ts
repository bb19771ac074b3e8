import { chmod, mkdir, open, stat } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ConfigError } from '../errors.js';

/** The files `porter init` writes: the config, and each secret in a file of its own. */
export interface SetupFiles {
  readonly dir: string;
  readonly config: unknown;
  /** File name (in `dir`) → secret. */
  readonly secrets: Readonly<Record<string, string>>;
  readonly force: boolean;
}

/**
 * Writes the config and the secrets with mode 0600 (set again on a file that existed, whatever its
 * mode was). Refuses, before writing anything, when one of them exists and `force` is not set.
 * Returns the config file's path.
 */
export async function writeSetup(files: SetupFiles): Promise<string> {
  const configPath = join(files.dir, 'config.json');
  const paths = [configPath, ...Object.keys(files.secrets).map((name) => join(files.dir, name))];
  if (!files.force) {
    const existing = paths.filter((path) => existsSync(path));
    if (existing.length > 0) {
      throw new ConfigError(
        `${existing.join(', ')} already exist${existing.length === 1 ? 's' : ''}: pass --force to replace, or --dir DIR to write elsewhere`,
      );
    }
  }
  await mkdir(files.dir, { recursive: true, mode: 0o750 });
  for (const [name, secret] of Object.entries(files.secrets)) await writePrivate(join(files.dir, name), `${secret}\n`);
  const schema = schemaPath();
  const config = schema ? { $schema: relative(files.dir, schema) || schema, ...(files.config as object) } : files.config;
  await writePrivate(configPath, `${JSON.stringify(config, null, 2)}\n`);
  return configPath;
}

async function writePrivate(path: string, text: string): Promise<void> {
  const file = await open(path, 'w', 0o600);
  try {
    // An existing file keeps its old mode through open(): set it before the secret goes in.
    await file.chmod(0o600);
    await file.writeFile(text);
    await file.sync();
  } finally {
    await file.close();
  }
  if (((await stat(path)).mode & 0o077) !== 0) await chmod(path, 0o600);
}

/** config.schema.json of this installation, for editors: it sits at the package's root. */
function schemaPath(): string | undefined {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 5; i++) {
    const candidate = join(dir, 'config.schema.json');
    if (existsSync(candidate)) return candidate;
    dir = dirname(dir);
  }
  return undefined;
}
