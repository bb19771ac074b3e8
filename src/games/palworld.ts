import type { Game } from './game.js';
import { unexpectedAnswer } from './errors.js';
import { splitLines } from './text.js';
import { defineGame } from './record.js';

/** A player whose character is still loading is listed with this uid (and often a wrong name). */
const LOADING_UID = '00000000';

/**
 * Palworld `ShowPlayers`: CSV with the header `name,playeruid,steamid`. Names may contain
 * commas and are not quoted, so each row is split from the RIGHT: the last field is the
 * steamid, the one before it the playeruid, everything else the name. Rows still loading
 * (uid 00000000) are skipped: they become real rows a moment later.
 */
export function parsePalworldShowPlayers(answer: string): string[] | null {
  const lines = splitLines(answer).filter((line) => line.trim() !== '');
  if (lines.length === 0 || !/^name,playeruid,steamid$/i.test(lines[0]!.trim())) return null;
  const ids: string[] = [];
  for (const line of lines.slice(1)) {
    const fields = line.trim();
    const last = fields.lastIndexOf(',');
    const middle = last < 0 ? -1 : fields.lastIndexOf(',', last - 1);
    if (middle < 0) continue;
    const uid = fields.slice(middle + 1, last).trim();
    const steamId = fields
      .slice(last + 1)
      .trim()
      .replace(/^steam_/i, '');
    if (uid === LOADING_UID || steamId === '') continue;
    ids.push(steamId);
  }
  return ids;
}

/** Shutdown and DoExit stop the server; a store never needs them. */
const PALWORLD_DEFAULT_DENY: readonly string[] = ['Shutdown', 'DoExit'];

export const palworldGame: Game = {
  name: 'palworld',
  rconPassword: 'Palworld: AdminPassword in PalWorldSettings.ini',
  identifier: 'SteamID64 (the steamid column of ShowPlayers; a "steam_" prefix is removed)',
  splitsOnSemicolon: false,
  failurePatterns: [/^Command not recognized/im],
  defaultDeny: PALWORLD_DEFAULT_DENY,
  async readPlayers(query) {
    const answer = await query('ShowPlayers');
    const ids = parsePalworldShowPlayers(answer);
    if (!ids) throw unexpectedAnswer('palworld', 'ShowPlayers', 'the CSV header "name,playeruid,steamid"', answer);
    return ids;
  },
};

export const palworldRecord = defineGame({
  id: 'palworld',
  docsTitle: 'Palworld',
  console: { transport: 'rcon', port: 25575, title: 'Palworld' },
  forServer: () => palworldGame,
});
