import type { Game } from './game.js';

/**
 * How `porter init` reaches a game's console when its settings do not say: the transport (a
 * transport's `executor.type`, checked against the descriptors in src/init/game-transport.ts), the
 * port of the game's own documentation (docs/games.md has them per game), and its name in init's
 * questions. Detection's probes (src/init/detect/probes/<id>.ts) take the port from here too.
 */
export interface GameConsole {
  readonly transport: string;
  readonly port: number;
  readonly title: string;
}

export interface DemoPurchase {
  readonly command: string;
  readonly player: string;
  readonly offlineExecute: boolean;
}

/**
 * What `porter demo --game` and `porter sim --game` play for a game: who is online, who joins, who
 * never comes, what is bought. The demo starts the simulator of the game's console transport
 * (src/demo/demo-games.ts), which answers as the game does (src/sim/consoles/<id>.ts, picked by src/sim/rcon-consoles.ts).
 */
export interface DemoScenario {
  /** The game server's name in the demo's banner. */
  readonly title: string;
  readonly online: string;
  readonly joiner: string;
  readonly absent: string;
  readonly purchases: readonly DemoPurchase[];
  readonly thanks: string;
  /** The config's `failurePatterns`, for a game whose failure answers come from a mod. */
  readonly failurePatterns?: readonly string[];
}

/** The config's `players` section as far as making a game's preset goes. */
export interface PlayersChoice {
  /** `custom` only: the console command that lists players. */
  readonly command?: string | undefined;
  /** `custom` only: a regular expression with a named group "id". */
  readonly pattern?: string | undefined;
}

/**
 * One game, described once, under one id: the value of `players.preset` (and of init's and the
 * demo's `--game`), and the name of every file that belongs to the game alone
 * (src/games/<id>.ts, src/init/detect/probes/<id>.ts, src/sim/consoles/<id>.ts). The registry
 * (registry.ts) lists the records; the schema, init, the demo and the simulators read them there.
 */
export interface GameRecord {
  readonly id: string;
  /** What docs/games.md's section and the README's link call it (a test reads it). */
  readonly docsTitle: string;
  /** Absent for the presets that are no game of their own (custom, none): init does not offer them. */
  readonly console?: GameConsole;
  /** Absent for a game `porter demo` does not show. */
  readonly demo?: DemoScenario;
  /** The game of one server: called once per server (the Minecraft preset remembers which list command the server understood). */
  forServer(players: PlayersChoice): Game;
}

/** A record as written, its literal id and transport kept for the types that derive from them. */
export function defineGame<const R extends GameRecord>(record: R): R {
  return record;
}
