import { GAMES, GAME_NAMES, type GameName } from '../games/registry.js';

/** The games `porter demo --game` and `porter sim --game` offer: those whose record has a demo scenario. */
export type DemoGameName = { [G in GameName]: (typeof GAMES)[G] extends { readonly demo: object } ? G : never }[GameName];

/**
 * Their names, in the registry's order: the CLI lists them at every start, and loads the demo
 * (demo-games.ts, which starts each one's simulator) only when it runs.
 */
export const DEMO_GAME_NAMES = GAME_NAMES.filter((game): game is DemoGameName => 'demo' in GAMES[game]);
