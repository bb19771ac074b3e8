import type { Game } from './game.js';
import { unexpectedAnswer } from './errors.js';
import { splitLines } from './text.js';
import { defineGame } from './record.js';

/**
 * Factorio `/players online`: `Online players (N):` then one indented `name (online)` row per
 * player. Factorio names cannot contain spaces, so the row minus its status suffix is the name.
 * `/players` (everyone) has the header `Players (N):`; there only rows marked online count.
 */
export function parseFactorioPlayers(answer: string): string[] | null {
  const lines = splitLines(answer);
  const header = lines.findIndex((line) => /^\s*(?:Online players|Players) \(\d+\):\s*$/i.test(line));
  if (header < 0) return null;
  // Under "Online players" every row is online; under "Players" only the marked ones are.
  const mustBeMarked = !/online/i.test(lines[header]!);
  const names: string[] = [];
  for (const line of lines.slice(header + 1)) {
    const row = /^\s*(\S+)(?:\s+\((online)\))?\s*$/i.exec(line);
    if (!row) continue;
    if (mustBeMarked && !row[2]) continue;
    names.push(row[1]!);
  }
  return names;
}

/**
 * Unknown commands, Lua errors from /c (and /silent-command), and a target player that does
 * not exist.
 */
const FACTORIO_FAILURE_PATTERNS: readonly RegExp[] = [
  /^Unknown command\b/im,
  /^Cannot execute command\b/im,
  /^Player .+ doesn't exist\.?$/im,
];

/**
 * /promote hands out admin; /quit stops the server; /whitelist disable opens it; /config
 * changes the server's settings; /server-save is harmless but /unban, /ban and /kick are
 * moderation, not store business. Only the ones that take the server over are listed.
 */
const FACTORIO_DEFAULT_DENY: readonly string[] = ['promote', 'quit', 'config', 'whitelist disable'];

export const factorioGame: Game = {
  name: 'factorio',
  rconPassword: "Factorio: --rcon-password on the server's command line",
  identifier: 'player name (Factorio account name)',
  splitsOnSemicolon: false,
  failurePatterns: FACTORIO_FAILURE_PATTERNS,
  defaultDeny: FACTORIO_DEFAULT_DENY,
  async readPlayers(query) {
    const answer = await query('/players online');
    const names = parseFactorioPlayers(answer);
    if (!names) throw unexpectedAnswer('factorio', '/players online', '"Online players (N):"', answer);
    return names;
  },
};

export const factorioRecord = defineGame({
  id: 'factorio',
  docsTitle: 'Factorio',
  console: { transport: 'rcon', port: 27015, title: 'Factorio' },
  forServer: () => factorioGame,
});
