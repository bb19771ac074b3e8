import { serverLabel } from '../config/server-label.js';
import type { Logger } from 'pino';
import type { Config, ResolvedServer } from '../config/schema.js';
import type { Shard } from '../config/shard.js';
import { exitCodeOf, UsageError } from '../errors.js';
import { scrubSecrets } from '../scrub.js';

/*
 * Everything heavy (zod, pino, undici) is imported inside the functions that need it, so
 * `porter --help` and a command's usage error stay quick.
 */

/** Every secret the process knows, so no output path can print one. */
const knownSecrets: string[] = [];

export function knownSecretValues(): readonly string[] {
  return knownSecrets;
}

/** A secret learned outside a config file (porter init's answers). */
export function rememberSecret(secret: string): void {
  knownSecrets.push(secret);
}

/**
 * The shard this porter runs (`--shard`, else `PORTER_SHARD`), or undefined for every server.
 * A value porter cannot use is a usage error (64), named with where it came from.
 */
export async function shardFrom(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): Promise<Shard | undefined> {
  const [text, source] = flag !== undefined ? [flag, '--shard' as const] : [env.PORTER_SHARD, 'PORTER_SHARD' as const];
  if (text === undefined || text === '') return undefined;
  const [{ parseShard }, { hostname }] = await Promise.all([import('../config/shard.js'), import('node:os')]);
  return parseShard(text, source, hostname());
}

/** The configuration, less the servers of other shards when `shard` is given. */
export async function loadShardFor(option: string | undefined, shard: Shard | undefined): Promise<Config> {
  const config = await loadConfigFor(option);
  const { applyShard } = await import('../config/shard.js');
  return applyShard(config, shard);
}

export async function loadConfigFor(option: string | undefined): Promise<Config> {
  for (const name of ['PORTER_API_TOKEN', 'PORTER_RCON_PASSWORD', 'PORTER_WEBHOOK_SECRET']) {
    const value = process.env[name];
    if (value) knownSecrets.push(value);
  }
  const [{ configPathFrom, loadConfig }, { configSecrets }] = await Promise.all([
    import('../config/load.js'),
    import('../config/secrets.js'),
  ]);
  const config = await loadConfig(configPathFrom(option, process.env), process.env);
  knownSecrets.push(...configSecrets(config));
  return config;
}

/**
 * Logger for the one-shot commands (rcon, players, check), whose output is their own lines: a
 * warning becomes a plain `porter: warning: …` line on stderr (scrubbed like every log line), and
 * nothing at error level is printed, since what failed reaches the user as the command's own
 * error or ✖ line. Without `warnings`, warnings are dropped too (`porter check` prints its own).
 */
export async function commandLogger(config: Config, options: { warnings: boolean } = { warnings: true }): Promise<Logger> {
  const { createLogger } = await import('../log.js');
  const plain = {
    write(line: string) {
      const { level, msg } = JSON.parse(line) as { level?: string; msg?: unknown };
      if (level === 'warn' && typeof msg === 'string') process.stderr.write(`porter: warning: ${msg}\n`);
    },
  };
  const logger = createLogger({
    level: options.warnings ? 'warn' : 'silent',
    pretty: false,
    secrets: () => knownSecrets,
    destination: plain,
  });
  for (const warning of config.warnings ?? []) logger.warn(warning);
  return logger;
}

export async function daemonLogger(config: Config): Promise<Logger> {
  const { createLogger } = await import('../log.js');
  const logger = createLogger({
    level: config.log.level,
    ...(config.log.pretty === undefined ? {} : { pretty: config.log.pretty }),
    secrets: () => knownSecrets,
  });
  for (const warning of config.warnings ?? []) logger.warn(warning);
  return logger;
}

/** The server `--server` names; a missing or unknown one is a usage error (64), as every flag value porter cannot use. */
export function pickServer(config: Config, id: string | undefined): ResolvedServer {
  if (id === undefined) {
    if (config.servers.length === 1) return config.servers[0]!;
    throw new UsageError(
      `the config has ${config.servers.length} servers: choose one with --server (${config.servers.map((s) => serverLabel(s)).join(', ')})`,
    );
  }
  const server = config.servers.find((s) => s.id === id || s.name === id);
  if (!server) throw new UsageError(`no server "${id}" in the config: use one of ${config.servers.map((s) => serverLabel(s)).join(', ')}`);
  return server;
}

/** Prints an error the way a user can act on it, never with a secret in it, and sets the exit code. */
export function reportFatal(error: unknown): void {
  const message = error instanceof Error ? error.message : String(error);
  const code = (error as { code?: unknown }).code;
  const prefix = typeof code === 'string' && code.startsWith('E_') ? `porter: ${code}: ` : 'porter: ';
  process.stderr.write(scrubSecrets(`${prefix}${message}\n`, knownSecrets));
  process.exitCode = exitCodeOf(error);
}

/** Wraps a command action: any error becomes a clear message and the right exit code. */
export function action<A extends unknown[]>(fn: (...args: A) => Promise<number | void>): (...args: A) => Promise<void> {
  return async (...args: A) => {
    try {
      const code = await fn(...args);
      if (typeof code === 'number') process.exitCode = code;
    } catch (error) {
      reportFatal(error);
    }
  };
}
