import { stat } from 'node:fs/promises';
import { dirname, isAbsolute, resolve } from 'node:path';
import { ConfigError } from '../errors.js';
import type { TransportDescriptor } from '../protocols/transport-descriptor.js';
import { transportOf } from '../protocols/transport-registry.js';
import { isHeaderSafe } from '../header-safe.js';
import { MIN_SCRUB_LENGTH } from '../scrub.js';
import { ConfigInvalidError } from './errors.js';
import { configFileWarning, listenWarning } from './exposure.js';
import { configErrorMap, describeIssues } from './issues.js';
import { readConfigFile } from './read-file.js';
import { resolveServer } from './resolve-server.js';
import { configSchema } from './schema.js';
import type { Config, ParsedConfig, ResolvedServer } from './schema.js';
import { resolveSecret } from './secrets.js';
import type { SecretSource } from './secrets.js';
import { resolveStores, type ResolveSecret } from './stores.js';
import { webhookSecretProblem } from './webhook-secret.js';

/** `-c FILE` wins over `PORTER_CONFIG`; there is no implicit default file, so porter never runs a config by surprise. */
export function configPathFrom(cliOption: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  const chosen = cliOption !== undefined && cliOption !== '' ? cliOption : env.PORTER_CONFIG;
  if (chosen === undefined || chosen === '') {
    throw new ConfigError('No configuration file given: pass -c FILE (or --config FILE), or set the PORTER_CONFIG environment variable.');
  }
  return resolve(chosen);
}

/** Reads, validates and resolves the config file; every problem is a ConfigError (exit 78). */
export async function loadConfig(path: string, env: NodeJS.ProcessEnv = process.env): Promise<Config> {
  const file = resolve(path);
  const raw = await readConfigFile(file);
  const { mode } = await stat(file);
  return parseConfig(raw, dirname(file), env, file, { fileMode: mode });
}

/** Names the source of a secret in a message when it is not the key itself. */
function from(key: string, origin: string | undefined): string {
  return origin !== undefined && origin !== key ? ` (from ${origin})` : '';
}

/**
 * Validates already-parsed JSON. `baseDir` anchors relative paths; `configPath` only names the
 * source in messages and in `Config.configPath`; `fileMode` (the file's permission bits, when
 * there is a file) lets it warn about a secret in a file other users can read.
 */
export async function parseConfig(
  raw: unknown,
  baseDir: string,
  env: NodeJS.ProcessEnv = process.env,
  configPath = '(inline configuration)',
  options: { readonly fileMode?: number } = {},
): Promise<Config> {
  const result = configSchema.safeParse(raw, { error: configErrorMap });
  if (!result.success) throw new ConfigInvalidError(configPath, describeIssues(result.error.issues, configSchema, raw));

  const parsed = result.data;
  const problems: string[] = [];
  const warnings = [configFileWarning(parsed, configPath, options.fileMode), listenWarning(parsed, configPath)].filter(
    (warning): warning is string => warning !== undefined,
  );
  const secret = async (source: SecretSource): Promise<{ value?: string; origin?: string; path?: string }> => {
    const found = await resolveSecret(source, baseDir, env);
    problems.push(...found.problems);
    warnings.push(...found.warnings);
    // Shorter secrets are not scrubbed from free text (see scrub.ts), so the loader warns about them.
    if (found.value !== undefined && found.value.length < MIN_SCRUB_LENGTH) {
      warnings.push(
        `${source.key}${from(source.key, found.origin)} is shorter than ${MIN_SCRUB_LENGTH} characters: porter redacts it from known keys but cannot scrub it from free text in logs; use a longer secret`,
      );
    }
    return found;
  };

  const { token: inlineToken, tokenFile, webhookSecret: inlineWebhookSecret, webhookSecretFile, ...api } = parsed.api;
  const findings = { problems, warnings, secret };
  const { token, tokenPath } = await readApiToken(inlineToken, tokenFile, findings);
  const webhookSecret = await readApiWebhookSecret(parsed, inlineWebhookSecret, webhookSecretFile, findings);

  const servers: ResolvedServer[] = [];
  for (const [index, server] of parsed.servers.entries()) {
    let password: string | undefined;
    // Where the transport's secret comes from besides the file: its descriptor says.
    const { secret: source }: TransportDescriptor = transportOf(server.executor.type);
    // A transport with a secret has these keys in its section (absent when not written).
    const keys: { readonly type: string; readonly password?: string | undefined; readonly passwordFile?: string | undefined } =
      server.executor;
    if (source) {
      ({ value: password } = await secret({
        key: `servers[${index}].executor.password`,
        fileKey: `servers[${index}].executor.passwordFile`,
        envName: source.envName,
        credentialName: source.credentialName,
        inline: keys.password,
        file: keys.passwordFile,
      }));
    }
    servers.push(resolveServer(server, baseDir, password));
  }

  const stores = await resolveStores(parsed.stores, secret);
  problems.push(...stores.problems);
  warnings.push(...stores.warnings);

  if (problems.length > 0) throw new ConfigInvalidError(configPath, problems);
  const { stores: _parsedStores, ...rest } = parsed;
  return {
    ...rest,
    configPath,
    warnings: [...new Set(warnings)],
    api: {
      ...api,
      token: token as string,
      ...(tokenPath !== undefined && { tokenPath }),
      ...(webhookSecret !== undefined && { webhookSecret }),
    },
    servers,
    ...(parsed.stores !== undefined && { stores: stores.stores }),
    stateDir: isAbsolute(parsed.stateDir) ? parsed.stateDir : resolve(baseDir, parsed.stateDir),
    ...(parsed.webhook && { webhook: withAbsoluteTls(parsed.webhook, baseDir) }),
  };
}

/** What reading the secrets found: problems (the config is refused), warnings, and the reader that collects both. */
interface Findings {
  readonly problems: string[];
  readonly warnings: string[];
  readonly secret: ResolveSecret;
}

/** `api.token` from wherever it is set, checked as an HTTP header carries it. */
async function readApiToken(
  inline: string | undefined,
  file: string | undefined,
  { problems, warnings, secret }: Findings,
): Promise<{ token: string | undefined; tokenPath: string | undefined }> {
  const {
    value: token,
    origin: tokenOrigin,
    path: tokenPath,
  } = await secret({
    key: 'api.token',
    fileKey: 'api.tokenFile',
    envName: 'PORTER_API_TOKEN',
    credentialName: 'porter-api-token',
    inline,
    file,
  });
  if (token !== undefined) {
    // It goes into an HTTP header; a stray newline would make every request fail obscurely.
    if (!isHeaderSafe(token)) {
      problems.push(
        `api.token${from('api.token', tokenOrigin)} contains whitespace or control characters (or characters beyond ASCII): copy the token again without spaces or line breaks`,
      );
    } else if (!token.startsWith('gci_')) {
      warnings.push(
        `api.token${from('api.token', tokenOrigin)} does not start with "gci_" like the store's API tokens do: check that it is the token from Integrations > API`,
      );
    }
  }
  return { token, tokenPath };
}

/** `api.webhookSecret`, read when a listener is configured or the secret is given all the same. */
async function readApiWebhookSecret(
  parsed: ParsedConfig,
  inline: string | undefined,
  file: string | undefined,
  { problems, warnings, secret }: Findings,
): Promise<string | undefined> {
  // Without a listener the secret is not needed; when one is given all the same it is still read, so a broken file is found now.
  if (parsed.webhook === undefined && inline === undefined && file === undefined) return undefined;
  const found = await secret({
    key: 'api.webhookSecret',
    fileKey: 'api.webhookSecretFile',
    envName: 'PORTER_WEBHOOK_SECRET',
    credentialName: 'porter-webhook-secret',
    inline,
    file,
    // With a named store's secret the listener has something to verify; /webhook then answers 404.
    optional: Object.values(parsed.stores ?? {}).some(
      (store) => store.webhookSecret !== undefined || store.webhookSecretFile !== undefined,
    ),
  });
  const problem =
    found.value === undefined
      ? undefined
      : webhookSecretProblem(found.value, `api.webhookSecret${from('api.webhookSecret', found.origin)}`);
  if (problem !== undefined) problems.push(problem);
  if (parsed.webhook === undefined && found.value !== undefined) {
    warnings.push('api.webhookSecret is set but webhook.listen is not: porter receives no webhook events; add a "webhook" section');
  }
  return problem === undefined ? found.value : undefined;
}

/** The certificate and key paths, relative to the config file's folder like every other path. */
function withAbsoluteTls(webhook: NonNullable<Config['webhook']>, baseDir: string): NonNullable<Config['webhook']> {
  if (!webhook.tls) return webhook;
  const path = (file: string) => (isAbsolute(file) ? file : resolve(baseDir, file));
  return { ...webhook, tls: { certFile: path(webhook.tls.certFile), keyFile: path(webhook.tls.keyFile) } };
}
