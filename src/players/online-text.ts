import type { OnlineIds } from '../games/game.js';

/**
 * Who is online, as `porter check` and `porter init` say it: players counted as players, with the
 * identifiers sent for them when there are more ("1 player online (3 identifiers): alice,
 * 76561198000000171, eos_…"). `raw` is what the game's listing gave (its count of players rides
 * on it), `ids` the identifiers as pulls send them. A player-list script gives identifiers only.
 */
export function onlineText(raw: OnlineIds, ids: readonly string[], fromScript: boolean): string {
  const shown = ids.length > 10 ? `${ids.slice(0, 10).join(', ')}, …` : ids.join(', ');
  const list = ids.length > 0 ? `: ${shown}` : '';
  const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
  if (fromScript) return `${plural(ids.length, 'identifier')} online${list}`;
  const players = raw.players ?? ids.length;
  const more = ids.length === players ? '' : ` (${plural(ids.length, 'identifier')})`;
  return `${plural(players, 'player')} online${more}${list}`;
}
