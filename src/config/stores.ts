import type { ParsedConfig, ResolvedStore } from './schema.js';
import type { SecretSource } from './secrets.js';
import { webhookSecretProblem } from './webhook-secret.js';

/**
 * The stores of `stores` (docs/design.md#many-stores), their secrets resolved. A named store's
 * token comes from `stores.<name>.token`, `stores.<name>.tokenFile` (trimmed) or the systemd
 * credential `porter-api-token-<name>`; no environment variable gives it (PORTER_API_TOKEN is the
 * default store's), so one variable can never land in the wrong store. The webhook secret comes
 * from `webhookSecret` or `webhookSecretFile`, or the credential `porter-webhook-secret-<name>`,
 * and is optional.
 */

/** Resolves one secret the way the loader does for every other; `value` undefined when it has none. */
export type ResolveSecret = (
  source: SecretSource,
) => Promise<{ readonly value?: string; readonly origin?: string; readonly path?: string }>;

/**
 * What is wrong with a token or webhook secret that goes into an HTTP header or an HMAC key, or
 * undefined. A carriage return is named on its own: it is what a file saved with Windows line
 * endings leaves inside a value that spans two lines.
 */
function secretTextProblem(key: string, origin: string | undefined): (value: string) => string | undefined {
  const from = origin !== undefined && origin !== key ? ` (from ${origin})` : '';
  return (value) => {
    if (value.includes('\r')) {
      return `${key}${from} contains a carriage return (a Windows line ending): write the secret on one line, without line breaks`;
    }
    // eslint-disable-next-line no-control-regex -- control characters are exactly what this looks for
    if (/[\s\u0000-\u001f\u007f]/.test(value)) {
      return `${key}${from} contains whitespace or control characters: copy the secret again without spaces or line breaks`;
    }
    return undefined;
  };
}

export async function resolveStores(
  stores: ParsedConfig['stores'],
  secret: ResolveSecret,
): Promise<{ stores: Record<string, ResolvedStore>; problems: string[]; warnings: string[] }> {
  const resolved: Record<string, ResolvedStore> = {};
  const problems: string[] = [];
  const warnings: string[] = [];
  for (const [name, store] of Object.entries(stores ?? {})) {
    const { token: inlineToken, tokenFile, webhookSecret: inlineWebhook, webhookSecretFile, ...api } = store;
    const key = `stores.${name}`;
    const token = await secret({
      key: `${key}.token`,
      fileKey: `${key}.tokenFile`,
      credentialName: `porter-api-token-${name}`,
      inline: inlineToken,
      file: tokenFile,
    });
    if (token.value !== undefined) {
      const problem = secretTextProblem(`${key}.token`, token.origin)(token.value);
      if (problem !== undefined) problems.push(problem);
      else if (!token.value.startsWith('gci_')) {
        warnings.push(
          `${key}.token does not start with "gci_" like the store's API tokens do: check that it is the token from Integrations > API`,
        );
      }
    }
    const webhook = await secret({
      key: `${key}.webhookSecret`,
      fileKey: `${key}.webhookSecretFile`,
      credentialName: `porter-webhook-secret-${name}`,
      inline: inlineWebhook,
      file: webhookSecretFile,
      optional: true,
    });
    if (webhook.value !== undefined) {
      const problem =
        secretTextProblem(`${key}.webhookSecret`, webhook.origin)(webhook.value) ??
        webhookSecretProblem(webhook.value, `${key}.webhookSecret`);
      if (problem !== undefined) problems.push(problem);
    }
    resolved[name] = {
      ...api,
      token: token.value ?? '',
      ...(token.path !== undefined && { tokenPath: token.path }),
      ...(webhook.value !== undefined && { webhookSecret: webhook.value }),
    };
  }
  return { stores: resolved, problems, warnings };
}
