import { Buffer } from 'node:buffer';
import type { Dispatcher } from 'undici';

/**
 * What porter's two undici users (the Seller API client and the TShock executor) share about an
 * HTTP exchange: reading a body under a cap, and telling from an error whether the request can
 * have left at all.
 */

/** Error codes raised before a single byte of a request can have reached the server. */
export const NOT_SENT_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EADDRNOTAVAIL',
  'UND_ERR_CONNECT_TIMEOUT',
]);

export class BodyTooLargeError extends Error {}

/** The whole body as UTF-8; rejects with BodyTooLargeError past `maxBytes`. */
export async function readCappedBody(body: Dispatcher.ResponseData['body'], maxBytes: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    size += chunk.length;
    // Leaving the loop destroys the stream: the rest of an oversized body is never read.
    if (size > maxBytes) throw new BodyTooLargeError();
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** The error's code; Node wraps happy-eyeballs failures in an AggregateError and undici sometimes nests a cause. */
export function errorCode(error: unknown): string | undefined {
  const seen = new Set<unknown>();
  let current: unknown = error;
  while (current && typeof current === 'object' && !seen.has(current)) {
    seen.add(current);
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    const errors = (current as { errors?: unknown }).errors;
    current = Array.isArray(errors) && errors.length > 0 ? errors[0] : (current as { cause?: unknown }).cause;
  }
  return undefined;
}
