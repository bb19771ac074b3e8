import { ofPlayers, type Game, type OnlineIds } from './game.js';
import { unexpectedAnswer } from './errors.js';
import { splitLines } from './text.js';
import { defineGame } from './record.js';

/**
 * Squad (and Post Scriptum / Beyond the Wire) `ListPlayers`:
 *
 *   ----- Active Players -----
 *   ID: 0 | Online IDs: EOS: 0002a1… steam: 7656119… | Name: -TWS- Yuca | Team ID: 1 | …
 *   ----- Recently Disconnected Players [Max of 15] -----
 *   ID: 88 | SteamID: 7656119… | Since Disconnect: 03m.15s | Name: ChiefWiggum
 *
 * Older builds print `SteamID: …` where newer ones print `Online IDs: EOS: … steam: …`. Only
 * the second field is read (the name comes later and may contain anything, "|" included), and
 * reading stops at the disconnected section.
 */
export function parseSquadListPlayers(answer: string): OnlineIds | null {
  const lines = splitLines(answer);
  const start = lines.findIndex((line) => /^-+\s*Active Players\s*-+$/i.test(line.trim()));
  if (start < 0) return null;
  const ids: string[] = [];
  let players = 0;
  for (const line of lines.slice(start + 1)) {
    const text = line.trim();
    if (/^-+\s*Recently Disconnected/i.test(text)) break;
    const row = /^ID: \d+ \| ([^|]*)\|/.exec(text);
    if (!row) continue;
    const field = row[1]!;
    const steam = /(?:^SteamID:|\bsteam:)\s*(\d{17})\b/i.exec(field)?.[1];
    const eos = /\bEOS:\s*([0-9a-f]{32})\b/i.exec(field)?.[1];
    if (steam) ids.push(steam);
    if (eos) ids.push(eos);
    if (steam || eos) players++;
  }
  return ofPlayers(ids, players);
}

/** AdminEndMatch, AdminRestartMatch, AdminChangeLayer… end the round for everyone; AdminKillServer stops it. */
const SQUAD_DEFAULT_DENY: readonly string[] = [
  'AdminKillServer',
  'AdminEndMatch',
  'AdminRestartMatch',
  'AdminChangeLayer',
  'AdminChangeMap',
  'AdminSetMaxNumPlayers',
  'AdminSetServerPassword',
];

export const squadGame: Game = {
  name: 'squad',
  rconPassword: 'Squad: Password in SquadGame/ServerConfig/Rcon.cfg',
  identifier: 'SteamID64 and EOS id (both are sent for every player)',
  splitsOnSemicolon: false,
  failurePatterns: [/^Command not recognized/im],
  defaultDeny: SQUAD_DEFAULT_DENY,
  async readPlayers(query) {
    const answer = await query('ListPlayers');
    const ids = parseSquadListPlayers(answer);
    if (!ids) throw unexpectedAnswer('squad', 'ListPlayers', 'a "----- Active Players -----" section', answer);
    return ids;
  },
};

export const squadRecord = defineGame({
  id: 'squad',
  docsTitle: 'Squad',
  console: { transport: 'rcon', port: 21114, title: 'Squad' },
  forServer: () => squadGame,
});
