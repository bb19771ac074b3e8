import { GAMES, type GameName } from '../games/registry.js';
import type { ConsoleTransportType } from '../protocols/transport-registry.js';

/**
 * How porter reaches each game's console and the port a server uses when its settings do not
 * say: the games registry's `console` of each game, its transport checked here against the
 * transports that have a console (a typo there is a compile error).
 */
export interface Transport {
  readonly type: ConsoleTransportType;
  readonly port: number;
  readonly title: string;
}

/** The games init knows: every game of the registry with a console. */
export type InitGame = { [G in GameName]: (typeof GAMES)[G] extends { readonly console: object } ? G : never }[GameName];

/** A game's console as its record gives it: detection's probes take their default port and transport from here. */
export function gameConsole(game: InitGame): Transport {
  const { transport, port, title } = GAMES[game].console;
  // The assignment is the check: a game's transport must be one that has a console.
  const type: ConsoleTransportType = transport;
  return { type, port, title };
}

export const INIT_GAMES = (Object.keys(GAMES) as GameName[]).filter((game): game is InitGame => 'console' in GAMES[game]);

export const GAME_TRANSPORTS: Readonly<Record<string, Transport>> = Object.fromEntries(INIT_GAMES.map((game) => [game, gameConsole(game)]));
