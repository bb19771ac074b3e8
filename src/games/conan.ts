import type { Game } from './game.js';
import { unexpectedAnswer } from './errors.js';
import { splitLines } from './text.js';
import { defineGame } from './record.js';

/**
 * Conan Exiles `listplayers`: a `|` table with the header
 * `Idx | Char name | Player name | User ID | Platform ID | Platform Name`. Character and player
 * names are chosen by players and may contain "|", so columns are counted from the RIGHT; the
 * Platform ID (the SteamID64 for Steam players) is the identifier.
 */
export function parseConanListPlayers(answer: string): string[] | null {
  const lines = splitLines(answer);
  const header = lines.findIndex((line) => /^\s*Idx\s*\|.*\|\s*Platform ID\s*\|/i.test(line));
  if (header < 0) return null;
  const ids: string[] = [];
  for (const line of lines.slice(header + 1)) {
    const columns = line.split('|').map((column) => column.trim());
    if (columns.length < 6 || !/^\d+$/.test(columns[0]!)) continue;
    const platformId = columns[columns.length - 2]!;
    if (platformId !== '') ids.push(platformId);
  }
  return ids;
}

/**
 * The admin console commands that take a server down or hand out admin rights; "|" chains a
 * second console command in Unreal's console.
 */
const CONAN_DEFAULT_DENY: readonly string[] = ['shutdown', 'MakeMeAdmin', 'SetServerSetting', '/\\|/'];

export const conanGame: Game = {
  name: 'conan',
  rconPassword: 'Conan Exiles: RconPassword in ConanSandbox/Saved/Config/<platform>Server/Game.ini, [RconPlugin]',
  identifier: 'Platform ID (the SteamID64 for Steam players)',
  splitsOnSemicolon: false,
  failurePatterns: [/^Command not recognized/im],
  defaultDeny: CONAN_DEFAULT_DENY,
  async readPlayers(query) {
    const answer = await query('listplayers');
    const ids = parseConanListPlayers(answer);
    if (!ids) throw unexpectedAnswer('conan', 'listplayers', 'the "Idx | Char name | … | Platform ID | Platform Name" table', answer);
    return ids;
  },
};

export const conanRecord = defineGame({
  id: 'conan',
  docsTitle: 'Conan',
  console: { transport: 'rcon', port: 25575, title: 'Conan Exiles' },
  forServer: () => conanGame,
});
