import type { HeaderCheck, HeaderOf } from './headers.js';
import { headerSignatureMatches, readHeaderSignature, type HeaderScheme } from './header-signature.js';
import { readStandardHeaders, standardSignatureMatches } from './standard-signature.js';

/** `webhook.scheme`: "standard" (Standard Webhooks) or one header over the raw body. */
export type WebhookScheme = 'standard' | HeaderScheme;

/** A request's signature headers, read and found well formed; the body is not checked yet. */
interface SignedHeaders {
  /** The Standard Webhooks `webhook-id`, remembered against replays; the single-header scheme has none. */
  readonly webhookId?: string;
  matches(body: Uint8Array, keys: readonly Uint8Array[]): boolean;
}

export function checkHeaders(scheme: WebhookScheme, header: HeaderOf, nowMs: number, toleranceS: number): HeaderCheck<SignedHeaders> {
  if (scheme === 'standard') {
    const read = readStandardHeaders(header, nowMs, toleranceS);
    if (!read.ok) return read;
    return { ok: true, value: { webhookId: read.value.id, matches: (body, keys) => standardSignatureMatches(read.value, body, keys) } };
  }
  const read = readHeaderSignature(header, scheme);
  if (!read.ok) return read;
  return { ok: true, value: { matches: (body, keys) => headerSignatureMatches(read.value, body, keys) } };
}
