import { serverLabel } from '../config/server-label.js';
import type { Logger } from 'pino';
import type { Config, ResolvedServer } from '../config/schema.js';
import type { Shard } from '../config/shard.js';
import { exitCodeOf, UsageError } from '../errors.js';
import type { SecretBook } from '../secret-book.js';
import { scrubbedOrWithheld } from '../scrub.js';

/*
 * Everything heavy (zod, pino, undici) is imported inside the functions that need it, so
 * `porter --help` and a command's usage error stay quick.
 */

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
export async function loadShardFor(option: string | undefined, shard: Shard | undefined, secrets: SecretBook): Promise<Config> {
  const config = await loadConfigFor(option, secrets);
  const { applyShard } = await import('../config/shard.js');
  return applyShard(config, shard);
}

/** The secrets the environment gives, learned before anything could print them: a usage error, a config refused for them. */
export function learnEnvironmentSecrets(secrets: SecretBook, env: NodeJS.ProcessEnv = process.env): void {
  for (const name of ['PORTER_API_TOKEN', 'PORTER_RCON_PASSWORD', 'PORTER_WEBHOOK_SECRET']) secrets.add(env[name]);
}

/** Loads the configuration; its secrets, and those of the environment even when it does not load, go into `secrets`. */
export async function loadConfigFor(option: string | undefined, secrets: SecretBook): Promise<Config> {
  learnEnvironmentSecrets(secrets);
  const [{ configPathFrom, loadConfig }, { configSecrets }] = await Promise.all([
    import('../config/load.js'),
    import('../config/secrets.js'),
  ]);
  const config = await loadConfig(configPathFrom(option, process.env), process.env);
  secrets.add(...configSecrets(config));
  return config;
}

/**
 * Logger for the one-shot commands (rcon, players, check), whose output is their own lines: a
 * warning becomes a plain `porter: warning: …` line on stderr (scrubbed like every log line), and
 * nothing at error level is printed, since what failed reaches the user as the command's own
 * error or ✖ line. Without `warnings`, warnings are dropped too (`porter check` prints its own).
 */
export async function commandLogger(
  config: Config,
  secrets: SecretBook,
  options: { warnings: boolean } = { warnings: true },
): Promise<Logger> {
  const { createLogger } = await import('../log.js');
  const plain = {
    write(line: string) {
      const { level, msg } = JSON.parse(line) as { level?: string; msg?: unknown };
      if (level === 'warn' && typeof msg === 'string') process.stderr.write(`porter: warning: ${msg}\n`);
    },
  };
  const logger = await createLogger({
    level: options.warnings ? 'warn' : 'silent',
    pretty: false,
    secrets,
    destination: plain,
  });
  for (const warning of config.warnings ?? []) logger.warn({ event: 'config.warning' }, warning);
  return logger;
}

export async function daemonLogger(config: Config, secrets: SecretBook): Promise<Logger> {
  const { createLogger } = await import('../log.js');
  const logger = await createLogger({
    level: config.log.level,
    ...(config.log.pretty === undefined ? {} : { pretty: config.log.pretty }),
    secrets,
  });
  for (const warning of config.warnings ?? []) logger.warn({ event: 'config.warning' }, warning);
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

/**
 * Prints an error the way a user can act on it, never with a secret in it, and sets the exit code.
 * Should scrubbing throw, the message is withheld: neither it nor what was thrown is printed.
 */
export function reportFatal(error: unknown, secrets: Pick<SecretBook, 'scrub'>): void {
  const message = error instanceof Error ? error.message : String(error);
  const code = (error as { code?: unknown } | null | undefined)?.code;
  const prefix = typeof code === 'string' && code.startsWith('E_') ? `porter: ${code}: ` : 'porter: ';
  process.stderr.write(`${prefix}${scrubbedOrWithheld(secrets.scrub, message)}\n`);
  process.exitCode = exitCodeOf(error);
}

/** Wraps a command action: any error becomes a clear message, scrubbed of every secret in `secrets`, and the right exit code. */
export function action<A extends unknown[]>(
  secrets: SecretBook,
  fn: (...args: A) => Promise<number | void>,
): (...args: A) => Promise<void> {
  return async (...args: A) => {
    try {
      const code = await fn(...args);
      if (typeof code === 'number') process.exitCode = code;
    } catch (error) {
      reportFatal(error, secrets);
    }
  };
}
