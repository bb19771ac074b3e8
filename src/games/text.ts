/** Small text helpers shared by the player-list parsers and the failure detection. */

/** Splits a console answer into lines, whatever the line ending. */
export function splitLines(answer: string): string[] {
  return answer.split(/\r\n|\r|\n/);
}

/**
 * Removes Minecraft's legacy formatting codes (§ followed by one character, including the
 * §x§r§r§g§g§b§b hex form, which is just a run of such pairs). Bukkit servers send them over
 * RCON for coloured names; they are never part of a player's name.
 */
export function stripColourCodes(text: string): string {
  return text.replace(/§./gsu, '');
}

/** At most `max` code points, with "…" when cut, newlines shown as spaces: safe to put in a message. */
export function excerpt(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  const points = Array.from(flat);
  return points.length <= max ? flat : `${points.slice(0, max - 1).join('')}…`;
}
