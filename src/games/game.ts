/**
 * A game (chosen with `players.preset` in the config): how to read who is online, which
 * identifier the store matches against, which answers mean a command failed, and which root
 * commands the store may not run by default. The delivery loop and the command policy depend on
 * this, never on how a game's answer is parsed.
 */
export interface Game {
  readonly name: string;
  /** What the identifiers are (e.g. "player name", "SteamID64"), for docs and `porter check`. */
  readonly identifier: string;
  /**
   * Where the game's own settings keep the password of its Source RCON console, named when the
   * game server rejects porter's ("Palworld: AdminPassword in PalWorldSettings.ini"). Games on
   * other protocols have it in their protocol's own message.
   */
  readonly rconPassword?: string;
  /** Source consoles split on ';': such games refuse commands containing it. */
  readonly splitsOnSemicolon: boolean;
  /** Conservative patterns that mark a game answer as a failed delivery. */
  readonly failurePatterns: readonly RegExp[];
  /** Root commands denied unless the owner's allow list says otherwise. */
  readonly defaultDeny: readonly string[];
  /** Reads raw identifiers through `query` (runs one console command, returns the answer). */
  readPlayers(query: (command: string) => Promise<string>): Promise<string[]>;
}

/**
 * Who is online, flat, as pulls send it. A game that lists several identifiers per player (a
 * name, a platform id, a cross-platform id) says how many players they belong to in `players`,
 * so a person is counted once; without it, each identifier is a player.
 */
export type OnlineIds = string[] & { readonly players?: number };

/** `ids` of `players` players: the count rides along without being one of the identifiers. */
export function ofPlayers(ids: string[], players: number): OnlineIds {
  return Object.defineProperty(ids, 'players', { value: players, enumerable: false });
}
