import { createHmac } from 'node:crypto';
import type { HeaderCheck, HeaderOf } from './headers.js';
import { sameBytes } from './same-bytes.js';

/**
 * The single-header scheme (`webhook.scheme: { header, encoding, prefix? }`) of services that
 * sign the raw body alone, GitHub-style: the header holds `prefix + encoding(HMAC-SHA256(key,
 * raw body))`. It carries no timestamp, so a replay is caught only by the payload's `eventId`
 * (docs/design.md#webhook-wake-ups).
 */
export interface HeaderScheme {
  readonly header: string;
  readonly encoding: 'hex' | 'base64';
  readonly prefix?: string | undefined;
}

const FORMS = { hex: /^[0-9a-fA-F]{64}$/, base64: /^[A-Za-z0-9+/]{43}=?$/ } as const;

export function readHeaderSignature(header: HeaderOf, scheme: HeaderScheme): HeaderCheck<Buffer> {
  const value = header(scheme.header.toLowerCase());
  const prefix = scheme.prefix ?? '';
  if (value === undefined || !value.startsWith(prefix)) return { ok: false, reason: 'signature' };
  const encoded = value.slice(prefix.length).trim();
  if (!FORMS[scheme.encoding].test(encoded)) return { ok: false, reason: 'signature' };
  return { ok: true, value: Buffer.from(encoded, scheme.encoding) };
}

export function headerSignatureMatches(received: Uint8Array, body: Uint8Array, keys: readonly Uint8Array[]): boolean {
  let matched = false;
  for (const key of keys) if (sameBytes(createHmac('sha256', key).update(body).digest(), received)) matched = true;
  return matched;
}
