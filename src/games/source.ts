import type { Game } from './game.js';
import { unexpectedAnswer } from './errors.js';
import { findSteamId64, toSteamId64 } from './steam-id.js';
import { splitLines } from './text.js';
import { defineGame } from './record.js';

/**
 * Source engine servers (CS:GO, TF2, Garry's Mod, L4D2, … and CS2) answering `status`.
 *
 * Source 1 prints one row per client: `# userid [slot] "name" uniqueid connected ping loss state …`.
 * The uniqueid (STEAM_X:Y:Z, [U:1:W]) is taken positionally after the LAST quote, so a name
 * that contains quotes or a fake SteamID cannot spoof it; it is sent as SteamID64.
 *
 * CS2 prints a `---------players--------` block whose rows end with the quoted name and carry no
 * SteamID at all; for those rows the name is the only identifier there is, and it is sent as is
 * (if a plugin adds a SteamID to the row, that wins). Bots, unauthenticated clients
 * (STEAM_ID_PENDING, STEAM_ID_LAN) and empty slots are skipped.
 */
export function parseSourceStatus(answer: string): string[] | null {
  if (!/^\s*(?:hostname|players)\s*:|# userid|-{5,}players-+/m.test(answer)) return null;
  const ids: string[] = [];
  let inCs2Block = false;
  for (const line of splitLines(answer)) {
    if (/^-{5,}players-+\s*$/.test(line.trim())) {
      inCs2Block = true;
      continue;
    }
    if (line.trim() === '#end') {
      inCs2Block = false;
      continue;
    }
    const id = inCs2Block ? cs2Row(line) : source1Row(line);
    if (id) ids.push(id);
  }
  return ids;
}

/** `#  2 "Alice" STEAM_1:0:123 05:23 45 0 active 198.51.100.2:27005`, with an optional slot column. */
function source1Row(line: string): string | null {
  const row = /^#\s*\d+(?:\s+\d+)?\s+"(.*)"\s+(\S+)(?:\s|$)[^"]*$/.exec(line);
  return row ? toSteamId64(row[2]!) : null;
}

/** `    2    02:05    0    0     active 786432 172.18.0.1:37738 'dheagman'`. */
function cs2Row(line: string): string | null {
  const row = /^\s*(\d+)\s+(\S+)\s+\d+\s+\d+\s+[a-z]+\s+\d+([^']*)'(.*)'\s*$/i.exec(line);
  if (!row) return null;
  const [, slot, time, middle, name] = row as unknown as [string, string, string, string, string];
  if (time === 'BOT' || time === '[NoChan]' || slot === '65535') return null;
  return findSteamId64(middle) ?? (name.trim() === '' ? null : name);
}

/**
 * srcds answers an unknown command with `Unknown command "x"` (CS2: `Unknown command 'x'`);
 * SourceMod's targeting answers when nobody matches the given name.
 */
const SOURCE_FAILURE_PATTERNS: readonly RegExp[] = [
  /^Unknown command\b/im,
  /^\[SM\] No matching clients? (?:was|were) found/im,
  /^\[SM\] Unknown command/im,
];

/**
 * quit/exit/_restart/killserver stop the server; rcon_password changes the password porter and
 * the owner log in with; sv_password locks every player out; sv_cheats turns cheats on for
 * everyone; sm_rcon runs any console command (it would wrap every other rule); "sm plugins
 * unload" / "meta unload" remove the admin and anti-cheat plugins. A store needs none of them.
 */
const SOURCE_DEFAULT_DENY: readonly string[] = [
  'quit',
  'exit',
  '_restart',
  'killserver',
  'rcon_password',
  'sv_password',
  'sv_cheats',
  'sm_rcon',
  'sm plugins unload',
  'meta unload',
];

export const sourceGame: Game = {
  name: 'source',
  rconPassword: 'Source: rcon_password in cfg/server.cfg, or +rcon_password on the command line',
  identifier: 'SteamID64 (from the STEAM_X:Y:Z / [U:1:W] column); on CS2, whose status shows no SteamID, the player name',
  splitsOnSemicolon: true,
  failurePatterns: SOURCE_FAILURE_PATTERNS,
  defaultDeny: SOURCE_DEFAULT_DENY,
  async readPlayers(query) {
    const answer = await query('status');
    const ids = parseSourceStatus(answer);
    if (!ids) throw unexpectedAnswer('source', 'status', 'the srcds status table', answer);
    return ids;
  },
};

export const sourceRecord = defineGame({
  id: 'source',
  docsTitle: 'Source',
  console: { transport: 'rcon', port: 27015, title: 'Source engine (CS2, GMod, TF2)' },
  forServer: () => sourceGame,
});
