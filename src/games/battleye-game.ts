import type { Game } from './game.js';
import { battleyeIdentifiers, parseBattlEyePlayers } from './battleye-players.js';
import { unexpectedAnswer } from './errors.js';

/**
 * What BattlEye RCon itself answers, whatever the game behind it: `Invalid ban format` to a
 * malformed `addBan`/`ban`. Commands BattlEye does not know go on to the game, which may answer
 * nothing at all; `Unknown command` is kept as a conservative catch for consoles that say so.
 */
const BATTLEYE_FAILURE_PATTERNS: readonly RegExp[] = [/^Invalid ban format/im, /^Unknown command/im];

/**
 * BattlEye's own commands that no purchase needs: `loadBans`/`writeBans` replace or overwrite the
 * ban list, `loadScripts`/`loadEvents` reload the anti-cheat filters, `MaxPing` kicks everyone over
 * a ping, `ban`/`addBan` lock a player out.
 */
const BATTLEYE_DEFAULT_DENY: readonly string[] = ['loadBans', 'writeBans', 'loadScripts', 'loadEvents', 'MaxPing', 'ban', 'addBan'];

/** A game behind BattlEye RCon: the shared player listing, failure answers and deny list, plus the game's own commands to deny. */
export function battleyeGame(name: string, gameDeny: readonly string[]): Game {
  return {
    name,
    identifier: 'player name and BattlEye GUID (both are sent for every player)',
    splitsOnSemicolon: false,
    failurePatterns: BATTLEYE_FAILURE_PATTERNS,
    defaultDeny: [...BATTLEYE_DEFAULT_DENY, ...gameDeny],
    async readPlayers(query) {
      const answer = await query('players');
      const players = parseBattlEyePlayers(answer);
      if (!players) throw unexpectedAnswer(name, 'players', 'the header "Players on server:"', answer);
      return battleyeIdentifiers(players);
    },
  };
}
