import { open, readFile } from 'node:fs/promises';
import { isAbsolute, join, resolve } from 'node:path';
import { isHeaderSafe } from '../header-safe.js';
import type { Config } from './schema.js';
import { describeFsError } from './read-file.js';
import { secretFileWarning } from './exposure.js';

/**
 * Where one secret may come from. Precedence, highest first:
 *   1. the environment variable (`PORTER_API_TOKEN`, `PORTER_RCON_PASSWORD`): an explicit setting
 *      for this process beats what the shared file says, as with most daemons;
 *   2. the inline value in the config (`api.token`, `password`);
 *   3. the secret file (`api.tokenFile`, `passwordFile`), content trimmed;
 *   4. the systemd credential `$CREDENTIALS_DIRECTORY/<credentialName>`, content trimmed.
 * Setting both the inline value and the file is a mistake, not a precedence question.
 */
export interface SecretSource {
  /** Key path of the inline value, as shown to the user: `api.token`, `servers[0].executor.password`. */
  readonly key: string;
  /** Key path of the file setting: `api.tokenFile`. */
  readonly fileKey: string;
  /** Absent for a secret no environment variable gives (a named store's token). */
  readonly envName?: string;
  readonly credentialName: string;
  readonly inline: string | undefined;
  readonly file: string | undefined;
  /** Nothing given is fine (a store's webhook secret); without it, a missing secret is a problem. */
  readonly optional?: boolean;
}

interface SecretResult {
  readonly value?: string;
  /** Where the value came from, for messages: `PORTER_API_TOKEN`, `api.tokenFile`, … */
  readonly origin?: string;
  /** The file the value was read from (a secret file or systemd credential), so it can be read again after a rotation. */
  readonly path?: string;
  readonly problems: string[];
  readonly warnings: string[];
}

/**
 * The longest secret porter takes, in characters: 8 KiB. No working secret comes near it, so a
 * longer one is a mistake (the wrong file, a key or a certificate, a log pasted into a variable)
 * that would only fail later, obscurely, and be scrubbed from every line meanwhile:
 * - the API token travels in one HTTP header line, and web servers refuse longer ones: nginx
 *   answers 400 past 8 KiB (large_client_header_buffers 4 8k,
 *   https://nginx.org/en/docs/http/ngx_http_core_module.html#large_client_header_buffers), Apache
 *   past 8190 bytes (LimitRequestFieldSize), Node.js past 16 KiB for all headers together
 *   (http.maxHeaderSize); OAuth and JWT-like tokens are a few hundred bytes to a few KiB;
 * - a game password rides in one protocol packet: a Source RCON body is at most 4096 bytes
 *   (https://developer.valvesoftware.com/wiki/Source_RCON_Protocol, SPEC_MAX_BODY_BYTES here);
 * - a webhook secret is a key of 24 to 64 bytes, base64-encoded (Standard Webhooks' `whsec_…`).
 */
export const MAX_SECRET_LENGTH = 8192;

/** Why `value` is refused for its length, naming where it came from (never the value); undefined when it is not too long. */
function secretLengthProblem(value: string, where: string): string | undefined {
  if (value.length <= MAX_SECRET_LENGTH) return undefined;
  return (
    `${where} holds ${value.length} characters, more than the ${MAX_SECRET_LENGTH} porter accepts for a secret: no API token, ` +
    `game password or webhook secret is that long, so it is most likely the wrong file or variable; put only the secret there`
  );
}

const CREDENTIALS_VARIABLE = /^\$(?:\{CREDENTIALS_DIRECTORY\}|CREDENTIALS_DIRECTORY)(?=\/|$)/;

/**
 * Resolves a `tokenFile`/`passwordFile` value: relative to the config file's folder, and a leading
 * `$CREDENTIALS_DIRECTORY` expanded so a unit file can use `LoadCredential=` with any name.
 */
function secretFilePath(file: string, baseDir: string, env: NodeJS.ProcessEnv): { path?: string; credential?: boolean; problem?: string } {
  if (CREDENTIALS_VARIABLE.test(file)) {
    const dir = env.CREDENTIALS_DIRECTORY;
    if (!dir) {
      return {
        problem:
          'refers to $CREDENTIALS_DIRECTORY, which is not set (porter is not running under systemd with LoadCredential=): use a plain path instead',
      };
    }
    return { path: join(dir, file.replace(CREDENTIALS_VARIABLE, '')), credential: true };
  }
  return { path: isAbsolute(file) ? file : resolve(baseDir, file) };
}

/** The secret a secret file or systemd credential holding `text` gives: its content, trimmed. */
export function secretFileValue(text: string): string {
  return text.trim();
}

/** The trimmed content and the permission bits of one opened file (so both describe the same file). */
async function readSecretFile(path: string): Promise<{ value?: string; mode?: number; problem?: string; tooLong?: true }> {
  try {
    const file = await open(path, 'r');
    try {
      const [{ mode }, text] = await Promise.all([file.stat(), file.readFile('utf8')]);
      const value = secretFileValue(text);
      if (value === '') return { problem: `${path} is empty: write the secret into it` };
      const tooLong = secretLengthProblem(value, path);
      if (tooLong !== undefined) return { problem: tooLong, mode, tooLong: true };
      return { value, mode };
    } finally {
      await file.close();
    }
  } catch (error) {
    return { problem: `cannot read ${path}: ${describeFsError(error)}` };
  }
}

/**
 * A secret file is trimmed, but a variable is taken as it is: a CR left by an env file saved on
 * Windows would become part of the secret, and the game would only say "password rejected".
 * Named here, for every secret read from the environment; the value itself is never shown.
 */
function envLineEnding(envName: string, value: string): string | undefined {
  const where = /\r\n?$/.test(value) ? 'ends with' : value.includes('\r') ? 'contains' : undefined;
  if (where === undefined) return undefined;
  return (
    `${envName} ${where} a carriage return (CR, "\\r"), most likely from an env file saved with Windows line endings: ` +
    `convert the file to Unix line endings (e.g. dos2unix) or set ${envName} again without it`
  );
}

export async function resolveSecret(source: SecretSource, baseDir: string, env: NodeJS.ProcessEnv): Promise<SecretResult> {
  const problems: string[] = [];
  const warnings: string[] = [];
  if (source.inline !== undefined && source.file !== undefined) {
    problems.push(`${source.key} and ${source.fileKey} are both set: keep only one of them`);
  }

  const fromEnv = source.envName === undefined ? undefined : env[source.envName];
  if (source.envName !== undefined && fromEnv !== undefined && fromEnv !== '') {
    const shadowed = [source.inline !== undefined ? source.key : undefined, source.file !== undefined ? source.fileKey : undefined].filter(
      Boolean,
    );
    if (shadowed.length > 0) {
      warnings.push(`${source.envName} is set in the environment and overrides ${shadowed.join(' and ')} from the configuration file`);
    }
    const stray = envLineEnding(source.envName, fromEnv) ?? secretLengthProblem(fromEnv, source.envName);
    if (stray !== undefined) return { problems: [...problems, stray], warnings };
    return { value: fromEnv, origin: source.envName, problems, warnings };
  }

  if (source.inline !== undefined) {
    const tooLong = secretLengthProblem(source.inline, source.key);
    if (tooLong !== undefined) return { problems: [...problems, tooLong], warnings };
    return { value: source.inline, origin: source.key, problems, warnings };
  }

  if (source.file !== undefined) {
    const where = secretFilePath(source.file, baseDir, env);
    if (!where.path) return { problems: [...problems, `${source.fileKey}: ${where.problem}`], warnings };
    const read = await readSecretFile(where.path);
    if (read.problem !== undefined) problems.push(`${source.fileKey}: ${read.problem}`);
    // systemd's credentials directory is private to the service whatever the file's bits say.
    const exposed = read.mode !== undefined && !where.credential ? secretFileWarning(source.fileKey, where.path, read.mode) : undefined;
    if (exposed !== undefined) warnings.push(exposed);
    return { ...(read.value !== undefined && { value: read.value, origin: source.fileKey, path: where.path }), problems, warnings };
  }

  const credentials = env.CREDENTIALS_DIRECTORY;
  if (credentials) {
    const path = join(credentials, source.credentialName);
    try {
      const value = secretFileValue(await readFile(path, 'utf8'));
      const tooLong = secretLengthProblem(value, `${source.key}: the systemd credential ${path}`);
      if (tooLong !== undefined) return { problems: [...problems, tooLong], warnings };
      if (value !== '') return { value, origin: `the systemd credential ${source.credentialName}`, path, problems, warnings };
      problems.push(`${source.key}: the systemd credential ${path} is empty`);
      return { problems, warnings };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') {
        problems.push(`${source.key}: cannot read the systemd credential ${path}: ${describeFsError(error)}`);
        return { problems, warnings };
      }
    }
  }

  if (source.optional) return { problems, warnings };
  const environment = source.envName === undefined ? '' : `, or the ${source.envName} environment variable`;
  problems.push(
    `${source.key} is missing: set ${source.key} or ${source.fileKey} (a file that holds it) in the config` +
      `${environment}, or under systemd LoadCredential=${source.credentialName}:FILE`,
  );
  return { problems, warnings };
}

/** Every secret of a loaded config, for the logger's scrubber and the CLI's error output. */
export function configSecrets(config: Config): string[] {
  const secrets = new Set<string>([config.api.token]);
  for (const store of Object.values(config.stores ?? {})) {
    secrets.add(store.token);
    if (store.webhookSecret !== undefined) secrets.add(store.webhookSecret);
  }
  if (config.api.webhookSecret !== undefined) secrets.add(config.api.webhookSecret);
  for (const server of config.servers) {
    if ('password' in server.executor) secrets.add(server.executor.password);
  }
  return [...secrets];
}

/**
 * The secret in `path` as it reads now, for a token rotated on disk while porter runs; undefined
 * when the file is unreadable, empty or holds what an HTTP header cannot carry (a half-written file
 * is not a token). A file that holds more than a secret can be is told to `refused`, for a log line:
 * porter keeps the token it has.
 */
export async function readSecretAgain(path: string, refused?: (problem: string) => void): Promise<string | undefined> {
  const read = await readSecretFile(path);
  if (read.tooLong && read.problem !== undefined) refused?.(read.problem);
  return read.value !== undefined && isHeaderSafe(read.value) ? read.value : undefined;
}
