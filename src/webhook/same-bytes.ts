import { timingSafeEqual } from 'node:crypto';

/**
 * Constant-time equality of a computed MAC and a received one. timingSafeEqual throws on unequal
 * lengths, and the length of a MAC is no secret (it is fixed by the algorithm), so a length
 * mismatch simply answers false.
 */
export function sameBytes(expected: Uint8Array, received: Uint8Array): boolean {
  return expected.length === received.length && timingSafeEqual(expected, received);
}
