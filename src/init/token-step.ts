import { readFile } from 'node:fs/promises';
import { pino } from 'pino';
import { createApiClient } from '../api/client.js';
import { checkToken, type ServerSummary } from '../api/token-check.js';
import { apiSchema } from '../config/schema.js';
import { describeIssues } from '../config/issues.js';
import { ConfigError, CredentialsError } from '../errors.js';
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
export async function proveToken(prompter: Prompter, options: InitOptions, env: NodeJS.ProcessEnv): Promise<ProvenToken> {
  let baseUrl = options.apiUrl;
  let token = options.tokenFile !== undefined ? await readTokenFile(options.tokenFile) : env.PORTER_API_TOKEN || undefined;
  for (;;) {
    baseUrl ??= await prompter.text({
      message: 'Store API address (store dashboard, Integrations > API)',
      flag: '--api-url',
      env: 'PORTER_API_URL',
      validate: (value) => problemWith({ baseUrl: value, token: 'x' }),
    });
    token ??= await prompter.secret({ message: 'API token (gci_…)', flag: '--token-file', env: 'PORTER_API_TOKEN' });
    const problem = problemWith({ baseUrl, token });
    if (problem !== undefined) {
      if (!prompter.interactive) throw new ConfigError(`porter init: ${problem}`);
      prompter.say('error', problem);
      baseUrl = token = undefined;
      continue;
    }
    const api = apiSchema.parse({ baseUrl, token });
    const client = createApiClient({ ...api, token }, { logger: pino({ level: 'silent' }) });
    let check;
    try {
      check = await checkToken(client);
    } finally {
      await client.close();
    }
    switch (check.kind) {
      case 'valid':
        prompter.say('ok', `token accepted by ${baseUrl}`);
        return { baseUrl, token, servers: check.servers };
      case 'valid-scope-unchecked':
        prompter.say('ok', `token accepted by ${baseUrl}`);
        return { baseUrl, token, servers: undefined };
      case 'invalid-token':
        if (!prompter.interactive || options.tokenFile !== undefined) throw check.error;
        prompter.say('error', 'the store refused this token (401): copy it again from the store dashboard (Integrations > API)');
        token = undefined;
        continue;
      case 'plan-required':
        throw new CredentialsError(
          "the store's plan does not include API access (402): upgrade the plan in the store dashboard, then run porter init again",
        );
      case 'error':
        if (!prompter.interactive || options.apiUrl !== undefined) {
          throw new ConfigError(
            `porter init: the store API at ${baseUrl} did not answer as expected: ${client.redact(check.error.message)}`,
          );
        }
        prompter.say('error', `the store API at ${baseUrl} did not answer as expected: ${client.redact(check.error.message)}`);
        baseUrl = undefined;
        continue;
    }
  }
}

function problemWith(raw: { baseUrl: string; token: string }): string | undefined {
  const parsed = apiSchema.safeParse(raw);
  if (parsed.success) {
    // eslint-disable-next-line no-control-regex -- control characters are exactly what this looks for
    return /[\s\u0000-\u001f\u007f]/.test(raw.token) ? 'the token contains spaces or line breaks: copy it again' : undefined;
  }
  return describeIssues(parsed.error.issues, apiSchema, raw).join('; ');
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
