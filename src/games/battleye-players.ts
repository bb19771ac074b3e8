import { ofPlayers, type OnlineIds } from './game.js';
import { splitLines } from './text.js';

/**
 * BattlEye RCon's `players` answer, the same on DayZ and Arma 3:
 *
 *   Players on server:
 *   [#] [IP Address]:[Port] [Ping] [GUID] [Name]
 *   --------------------------------------------------
 *   0   127.0.0.1:2304    31   80a5885ebe2420bab5e1581234567890(OK) Bravo17
 *   1   198.51.100.7:2304 64   04b81a0bd914e7ba610ef31234567890(?) Player Name (Lobby)
 *   2   203.0.113.9:2304  -1   -                                   Joining (Lobby)
 *   (3 players in total)
 *
 * The GUID is followed by `(OK)` once BattlEye's master verified it and `(?)` until then (or when
 * the master did not answer); a player still joining has `-` and a ping of -1. ` (Lobby)` after the
 * name marks a player in the lobby, not part of the name. The name is the rest of the row and may
 * hold spaces, commas and brackets. Seen in open-source BattlEye RCon tools' parsers and fixtures
 * (WoozyMasta/bercon-cli, B3's BattlEye parser tests, conqp/rcon-rs).
 */
interface BattlEyePlayer {
  readonly slot: number;
  readonly name: string;
  /** 32 hex digits, lower case; undefined while the player is still joining. */
  readonly guid: string | undefined;
  readonly verified: boolean;
  readonly lobby: boolean;
}

const HEADER = /^Players on server:\s*$/i;
const ROW = /^(\d+)\s+(\S+)\s+(-?\d+)\s+(?:([0-9a-f]{32})(\(OK\)|\(\?\))?|-)\s+(.*)$/i;
const LOBBY = /\s*\(Lobby\)$/;

/** The rows of a `players` answer; null when the answer is no player list at all. */
export function parseBattlEyePlayers(answer: string): BattlEyePlayer[] | null {
  const lines = splitLines(answer);
  const header = lines.findIndex((line) => HEADER.test(line.trim()));
  if (header < 0) return null;
  const players: BattlEyePlayer[] = [];
  for (const line of lines.slice(header + 1)) {
    const text = line.trim();
    if (/^\(\d+ players? in total\)$/i.test(text)) break;
    const row = ROW.exec(text);
    if (!row) continue;
    const [, slot, , , guid, check, rest] = row as unknown as [
      string,
      string,
      string,
      string,
      string | undefined,
      string | undefined,
      string,
    ];
    const lobby = LOBBY.test(rest);
    const name = rest.replace(LOBBY, '').trim();
    players.push({ slot: Number(slot), name, guid: guid?.toLowerCase(), verified: check === '(OK)', lobby });
  }
  return players;
}

/** The identifiers of each player: the name and, once BattlEye computed it, the GUID. */
export function battleyeIdentifiers(players: readonly BattlEyePlayer[]): OnlineIds {
  const ids = players.flatMap((player) => [player.name, ...(player.guid === undefined ? [] : [player.guid])]).filter((id) => id !== '');
  return ofPlayers(ids, players.filter((player) => player.name !== '' || player.guid !== undefined).length);
}
