import type { Game } from './game.js';
import { unexpectedAnswer } from './errors.js';
import { splitLines } from './text.js';
import { defineGame } from './record.js';

/**
 * ARK: Survival Evolved / Ascended `ListPlayers`: one `N. Name, ID` row per player, or
 * `No Players Connected`. The ID is the SteamID64 on Survival Evolved and the EOS id on
 * Ascended. Names may contain commas, so the row is split at its LAST comma.
 */
export function parseArkListPlayers(answer: string): string[] | null {
  const ids: string[] = [];
  let recognised = false;
  for (const line of splitLines(answer)) {
    const text = line.trim();
    if (text === '') continue;
    if (/^No Players Connected$/i.test(text)) {
      recognised = true;
      continue;
    }
    const row = /^\d+\.\s*(.*),\s*([0-9A-Za-z]+)$/.exec(text);
    if (!row) continue;
    recognised = true;
    ids.push(row[2]!);
  }
  return recognised ? ids : null;
}

/** Unreal's console answer to a command it does not know. */
const UNREAL_FAILURE_PATTERNS: readonly RegExp[] = [/^Command not recognized/im];

/**
 * DoExit stops the server; DestroyWildDinos / DestroyAll wipe the map; SetCheatPlayer and
 * EnableCheats hand out admin cheats. "|" chains a second console command in Unreal's console
 * (the way admins run several cheats at once), so a nickname containing it could smuggle one in.
 */
const ARK_DEFAULT_DENY: readonly string[] = ['DoExit', 'DestroyWildDinos', 'DestroyAll', 'SetCheatPlayer', 'EnableCheats', '/\\|/'];

export const arkGame: Game = {
  name: 'ark',
  rconPassword: 'ARK: ServerAdminPassword in GameUserSettings.ini, [ServerSettings], or ?ServerAdminPassword= on the command line',
  identifier: 'SteamID64 on ARK: Survival Evolved, EOS id on ARK: Survival Ascended (the ID after the comma)',
  splitsOnSemicolon: false,
  failurePatterns: UNREAL_FAILURE_PATTERNS,
  defaultDeny: ARK_DEFAULT_DENY,
  async readPlayers(query) {
    const answer = await query('ListPlayers');
    const ids = parseArkListPlayers(answer);
    if (!ids) throw unexpectedAnswer('ark', 'ListPlayers', '"0. Name, ID" rows or "No Players Connected"', answer);
    return ids;
  },
};

export const arkRecord = defineGame({
  id: 'ark',
  docsTitle: 'ARK',
  console: { transport: 'rcon', port: 27020, title: 'ARK' },
  forServer: () => arkGame,
});
