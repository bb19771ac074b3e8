/** The platform stores at most this many Unicode code points of a failure reason (docs/design.md#the-api-contract). */
const MAX_REASON_CODE_POINTS = 1000;

/**
 * Cuts a failure reason to `max` code points, the closing `…` included when cut. Counting code
 * points rather than UTF-16 units keeps astral characters (emoji in a player name) whole: slicing
 * the string would split a surrogate pair and send half a character.
 */
export function truncateReason(reason: string, max = MAX_REASON_CODE_POINTS): string {
  const codePoints = Array.from(reason);
  if (codePoints.length <= max) return reason;
  return `${codePoints.slice(0, max - 1).join('')}…`;
}
