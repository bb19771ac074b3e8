import { readFile } from 'node:fs/promises';
import { pino } from 'pino';
import { createApiClient } from '../api/wire/client.js';
import { checkToken, type ServerSummary } from '../api/answers/token-check.js';
import { apiSchema } from '../config/schema.js';
import { describeIssues } from '../config/issues.js';
import { ApiTransportError, type TransportFailure } from '../api/errors.js';
import { ConfigError, CredentialsError, type PorterError } from '../errors.js';
import { isHeaderSafe } from '../header-safe.js';
import type { Prompter } from './prompter.js';
import type { InitOptions } from './options.js';

export interface ProvenToken {
  readonly baseUrl: string;
  readonly token: string;
  /** The store's servers; undefined when the token lacks servers:read. */
  readonly servers: readonly ServerSummary[] | undefined;
}

/**
 * The token first: proven against the store before anything is saved. On a terminal a refused
 * token or an unreachable address is asked again; from flags it ends init (exit 78).
 */
export async function proveToken(
  prompter: Prompter,
  options: InitOptions,
  env: NodeJS.ProcessEnv,
  /** A running `porter sim`'s store the owner chose (src/init/sim-step.ts): its token, not PORTER_API_TOKEN's, goes with it. */
  chosen?: { readonly baseUrl: string; readonly token: string },
): Promise<ProvenToken> {
  let baseUrl = options.apiUrl ?? chosen?.baseUrl;
  // An address that did not answer is offered again to correct, not asked empty.
  let lastUrl: string | undefined;
  let token =
    options.tokenFile !== undefined ? await readTokenFile(options.tokenFile) : (chosen?.token ?? (env.PORTER_API_TOKEN || undefined));
  for (;;) {
    baseUrl ??= await prompter.text({
      message: 'Store API address (store dashboard, Integrations > API)',
      flag: '--api-url',
      env: 'PORTER_API_URL',
      ...(lastUrl !== undefined && { initial: lastUrl }),
      validate: (value) => problemWith({ baseUrl: value, token: 'x' }),
    });
    token ??= await prompter.secret({ message: 'API token (gci_…)', flag: '--token-file', env: 'PORTER_API_TOKEN' });
    const problem = problemWith({ baseUrl, token });
    if (problem !== undefined) {
      if (!prompter.interactive) throw new ConfigError(`porter init: ${problem}`);
      prompter.say('error', problem);
      lastUrl = baseUrl;
      baseUrl = token = undefined;
      continue;
    }
    const { check, redact } = await askStore(baseUrl, token);
    switch (check.kind) {
      case 'valid':
        prompter.say('ok', `token accepted by ${baseUrl}`);
        return { baseUrl, token, servers: check.servers };
      case 'valid-scope-unchecked':
        prompter.say('ok', `token accepted by ${baseUrl}`);
        return { baseUrl, token, servers: undefined };
      case 'invalid-token':
        if (!prompter.interactive || options.tokenFile !== undefined) {
          const from = options.tokenFile !== undefined ? `--token-file ${options.tokenFile}` : '--token-file (or PORTER_API_TOKEN)';
          throw new CredentialsError(
            `porter init: the store at ${baseUrl} refused this token (401): copy it again from the store dashboard (Integrations > API) into ${from}`,
          );
        }
        prompter.say('error', 'the store refused this token (401): copy it again from the store dashboard (Integrations > API)');
        token = undefined;
        continue;
      case 'plan-required':
        throw new CredentialsError(
          "the store's plan does not include API access (402): upgrade the plan in the store dashboard, then run porter init again",
        );
      case 'error': {
        const said = `the store API at ${baseUrl} ${unanswered(check.error, check.status, redact)}`;
        if (!prompter.interactive || options.apiUrl !== undefined) throw new ConfigError(`porter init: ${said}`);
        prompter.say('error', said);
        lastUrl = baseUrl;
        baseUrl = undefined;
        continue;
      }
    }
  }
}

/** What the store at `baseUrl` says about `token` (GET /v1/seller/servers, which claims nothing); `redact` scrubs its secrets. */
export async function askStore(baseUrl: string, token: string) {
  const api = apiSchema.parse({ baseUrl, token });
  const client = createApiClient({ ...api, token }, { logger: pino({ level: 'silent' }) });
  try {
    return { check: await checkToken(client), redact: client.redact };
  } finally {
    await client.close();
  }
}

/** What went wrong with the store's answer, in init's words: its flag, not the daemon's config key or its retries. */
function unanswered(error: PorterError, status: number | undefined, redact: (text: string) => string): string {
  const check = 'check the address (--api-url): it is in the store dashboard (Integrations > API)';
  if (error instanceof ApiTransportError) {
    const detail = redact(error.cause instanceof Error ? error.cause.message : error.failure);
    const what: Partial<Record<TransportFailure, string>> = {
      connect: 'could not be reached',
      timeout: 'did not answer in time',
      reset: 'closed the connection without an answer',
      tls: 'failed the TLS handshake (check also the system clock and CA certificates)',
      protocol: 'did not answer with HTTP',
      'body-too-large': 'answered with more than a store API sends',
    };
    return `${what[error.failure] ?? 'did not answer'} (${detail}): ${check}`;
  }
  return `answered ${status !== undefined ? `HTTP ${status}` : 'something else'} instead of its list of servers: ${check}`;
}

/** Init's flags in place of the config keys the schema names. */
const FLAG_OF: Readonly<Record<string, string>> = { baseUrl: 'the address (--api-url)', token: 'the token (--token-file)' };

function problemWith(raw: { baseUrl: string; token: string }): string | undefined {
  const parsed = apiSchema.safeParse(raw);
  if (parsed.success) {
    // A store token is printable ASCII; anything else is a copy gone wrong, and an HTTP header could not carry it.
    return !isHeaderSafe(raw.token)
      ? 'the token contains spaces, line breaks or characters beyond ASCII, which a store token never has: copy it again from the store dashboard (Integrations > API)'
      : undefined;
  }
  return describeIssues(parsed.error.issues, apiSchema, raw)
    .map((line) => line.replace(/^(baseUrl|token):/, (_, key: string) => `${FLAG_OF[key]}:`))
    .join('; ');
}

async function readTokenFile(path: string): Promise<string> {
  try {
    const token = (await readFile(path, 'utf8')).trim();
    if (token === '') throw new ConfigError(`--token-file ${path} is empty: write the API token into it`);
    return token;
  } catch (error) {
    if (error instanceof ConfigError) throw error;
    throw new ConfigError(
      `--token-file ${path} cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)}): check the path`,
    );
  }
}
