import { createHmac } from 'node:crypto';
import type { HeaderCheck, HeaderOf } from './headers.js';
import { sameBytes } from './same-bytes.js';

/**
 * Standard Webhooks (docs/design.md#webhook-wake-ups): `webhook-id`, `webhook-timestamp` (Unix
 * seconds) and `webhook-signature`, a space-separated list of `v1,<base64 HMAC-SHA256>` entries
 * over `<id>.<timestamp>.<raw body>`. Any one entry matching any one key is enough: while a secret
 * is rotated the sender signs with both. Entries of other versions (`v1a`, asymmetric) are skipped.
 *
 * Written on node:crypto rather than the `standardwebhooks` package: that one verifies with a
 * fixed 5-minute tolerance, signs the body as a UTF-8 string rather than its bytes, and parses
 * the JSON itself; the tests use it as the independent signer (docs/contributing.md).
 */

interface StandardHeaders {
  readonly id: string;
  /** As received: the signed content holds these exact digits. */
  readonly timestamp: string;
  readonly signatures: readonly Buffer[];
}

const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;
/** A MAC of SHA-256 is 32 bytes; an entry of another length can never match, so it is not even decoded. */
const SHA256_BASE64_LENGTH = 44;

/** Checks what can be checked before the body is read: all three headers present and well formed, the timestamp fresh. */
export function readStandardHeaders(header: HeaderOf, nowMs: number, toleranceS: number): HeaderCheck<StandardHeaders> {
  const id = header('webhook-id');
  const timestamp = header('webhook-timestamp');
  const signature = header('webhook-signature');
  if (!id || timestamp === undefined || signature === undefined) return { ok: false, reason: 'signature' };
  if (!/^[0-9]{1,15}$/.test(timestamp)) return { ok: false, reason: 'signature' };
  // The past and the future alike: a timestamp far ahead would keep a captured event replayable for as long.
  if (Math.abs(nowMs / 1000 - Number(timestamp)) > toleranceS) return { ok: false, reason: 'timestamp' };
  const signatures: Buffer[] = [];
  for (const entry of signature.split(' ')) {
    const comma = entry.indexOf(',');
    if (comma < 0 || entry.slice(0, comma) !== 'v1') continue;
    const encoded = entry.slice(comma + 1);
    if (encoded.length === SHA256_BASE64_LENGTH && BASE64.test(encoded)) signatures.push(Buffer.from(encoded, 'base64'));
  }
  if (signatures.length === 0) return { ok: false, reason: 'signature' };
  return { ok: true, value: { id, timestamp, signatures } };
}

export function standardSignatureMatches(headers: StandardHeaders, body: Uint8Array, keys: readonly Uint8Array[]): boolean {
  let matched = false;
  for (const key of keys) {
    const mac = createHmac('sha256', key).update(`${headers.id}.${headers.timestamp}.`).update(body).digest();
    // Every entry is compared, match or not, so the time taken says nothing about which one matched.
    for (const received of headers.signatures) if (sameBytes(mac, received)) matched = true;
  }
  return matched;
}
