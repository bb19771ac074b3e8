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
  /** Source consoles split on ';': such games refuse commands containing it. */
  readonly splitsOnSemicolon: boolean;
  /** Conservative patterns that mark a game answer as a failed delivery. */
  readonly failurePatterns: readonly RegExp[];
  /** Root commands denied unless the owner's allow list says otherwise. */
  readonly defaultDeny: readonly string[];
  /** Reads raw identifiers through `query` (runs one console command, returns the answer). */
  readPlayers(query: (command: string) => Promise<string>): Promise<string[]>;
}
