import type { GameName } from '../games/registry.js';
import type { RconFlavour } from '../protocols/rcon/exchange.js';
import { runMinecraftCommand } from './consoles/minecraft.js';
import { runPalworldCommand } from './consoles/palworld.js';
import { runSourceCommand } from './consoles/source.js';
import { runZomboidCommand } from './consoles/zomboid.js';
import { isQueryCommand } from './rcon-answers.js';
import type { RconConsole } from './rcon-world.js';

/** How the simulated RCON server answers as one game: its dialect on the wire and its console. */
interface RconGameConsole {
  readonly flavour: RconFlavour;
  readonly run: RconConsole;
  /**
   * The game's commands that only read (its player list), besides those every game's simulator
   * knows (isQueryCommand): flagged in `executed`, so deliveries are counted without them.
   */
  readonly queries?: readonly string[];
}

/**
 * The games whose consoles the RCON simulator knows, by the game's id (src/games/<id>.ts). The
 * flavour is what the real server speaks, written here rather than taken from porter's client
 * defaults, so that a test of those defaults runs against the game and not against itself. Any other
 * RCON game is simulated as a Source server.
 */
const RCON_CONSOLES: { readonly [G in GameName]?: RconGameConsole } = {
  minecraft: { flavour: 'minecraft', run: runMinecraftCommand },
  source: { flavour: 'source', run: runSourceCommand },
  palworld: { flavour: 'id0', run: runPalworldCommand, queries: ['ShowPlayers'] },
  zomboid: { flavour: 'source', run: runZomboidCommand },
};

/** The game a simulator given only a dialect plays: each dialect's own game. */
const GAME_OF_FLAVOUR: Readonly<Record<RconFlavour, GameName>> = { minecraft: 'minecraft', source: 'source', id0: 'palworld' };

/** Which game, dialect and console a simulated RCON server plays, from what its options say (either, both, or neither: Minecraft). */
export function rconConsoleFor(options: { readonly game?: GameName | undefined; readonly flavour?: RconFlavour | undefined }): {
  readonly game: GameName;
  readonly flavour: RconFlavour;
  readonly run: RconConsole;
  /** Whether a command only reads: one every simulator knows, or one of the game's own. */
  readonly isQuery: (command: string) => boolean;
} {
  const game = options.game ?? GAME_OF_FLAVOUR[options.flavour ?? 'minecraft'];
  const known = RCON_CONSOLES[game] ?? RCON_CONSOLES.source!;
  const queries = new Set(known.queries?.map((root) => root.toLowerCase()));
  const isQuery = (command: string) => isQueryCommand(command) || queries.has(command.trim().split(/\s+/)[0]?.toLowerCase() ?? '');
  return { game, flavour: options.flavour ?? known.flavour, run: known.run, isQuery };
}
