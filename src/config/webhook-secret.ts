import type { Config } from './schema.js';

/**
 * A webhook secret as the signer uses it (docs/design.md#webhook-wake-ups): after a `whsec_`
 * prefix, base64 of the key's bytes (Standard Webhooks); without that prefix, the text's own
 * UTF-8 bytes (what single-header services hand out).
 */
const PREFIX = 'whsec_';
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

export function webhookKey(secret: string): Uint8Array {
  return secret.startsWith(PREFIX) ? Buffer.from(secret.slice(PREFIX.length), 'base64') : Buffer.from(secret, 'utf8');
}

/** What is wrong with a secret as read (trimmed), or undefined; `key` names its setting in the message. */
export function webhookSecretProblem(secret: string, key: string): string | undefined {
  if (secret.includes('\r')) {
    return `${key} contains a carriage return (a file saved with Windows line endings?): save it with the secret alone on one line`;
  }
  // eslint-disable-next-line no-control-regex -- control characters are exactly what this looks for
  if (/[\s\u0000-\u001f\u007f]/.test(secret)) {
    return `${key} contains whitespace or control characters: copy the secret again without spaces or line breaks`;
  }
  if (secret.startsWith(PREFIX)) {
    const encoded = secret.slice(PREFIX.length);
    if (!BASE64.test(encoded) || webhookKey(secret).length === 0) {
      return `${key} starts with "${PREFIX}" but what follows is not base64: copy the whole secret from the store's webhook settings`;
    }
  }
  return undefined;
}

/** The webhook secret a store's events are signed with: the store of `api` when `store` is undefined. */
export function webhookSecretOf(config: Pick<Config, 'api' | 'stores'>, store: string | undefined): string | undefined {
  return store === undefined ? config.api.webhookSecret : config.stores?.[store]?.webhookSecret;
}
