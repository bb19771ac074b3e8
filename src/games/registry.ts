import { ConfigError } from '../errors.js';
import type { Game } from './game.js';
import { arkGame } from './ark.js';
import { arma3Game } from './arma3.js';
import { conanGame } from './conan.js';
import { createCustomGame } from './custom.js';
import { dayzGame } from './dayz.js';
import { factorioGame } from './factorio.js';
import { createMinecraftGame } from './minecraft.js';
import { noneGame } from './none.js';
import { palworldGame } from './palworld.js';
import { rustGame } from './rust.js';
import { sevenDaysGame } from './sevendays.js';
import { sourceGame } from './source.js';
import { squadGame } from './squad.js';
import { terrariaGame } from './terraria.js';
import { zomboidGame } from './zomboid.js';

/**
 * How `porter init` reaches a game's console when its settings do not say: the transport (a
 * transport's `executor.type`, checked against the descriptors in src/init/game-transport.ts), the
 * port of the game's own documentation (docs/games.md has them per game), and its name in init's questions.
 */
interface GameConsole {
  readonly transport: string;
  readonly port: number;
  readonly title: string;
}

/** One game, described once: its config name is its key. */
interface GameEntry {
  /** What docs/games.md's section and the README's link call it (a test reads this list). */
  readonly docsTitle: string;
  /** Absent for the presets that are no game of their own (custom, none). */
  readonly console?: GameConsole;
}

/** Every game porter knows, by the name `players.preset` gives it, in the order the schema lists them. */
export const GAMES = {
  minecraft: { docsTitle: 'Minecraft', console: { transport: 'rcon', port: 25575, title: 'Minecraft' } },
  source: { docsTitle: 'Source', console: { transport: 'rcon', port: 27015, title: 'Source engine (CS2, GMod, TF2)' } },
  ark: { docsTitle: 'ARK', console: { transport: 'rcon', port: 27020, title: 'ARK' } },
  palworld: { docsTitle: 'Palworld', console: { transport: 'rcon', port: 25575, title: 'Palworld' } },
  squad: { docsTitle: 'Squad', console: { transport: 'rcon', port: 21114, title: 'Squad' } },
  conan: { docsTitle: 'Conan', console: { transport: 'rcon', port: 25575, title: 'Conan Exiles' } },
  factorio: { docsTitle: 'Factorio', console: { transport: 'rcon', port: 27015, title: 'Factorio' } },
  rust: { docsTitle: 'Rust', console: { transport: 'webrcon', port: 28016, title: 'Rust' } },
  zomboid: { docsTitle: 'Project Zomboid', console: { transport: 'rcon', port: 27015, title: 'Project Zomboid' } },
  '7dtd': { docsTitle: '7 Days to Die', console: { transport: 'telnet', port: 8081, title: '7 Days to Die' } },
  terraria: { docsTitle: 'Terraria', console: { transport: 'tshock', port: 7878, title: 'Terraria (TShock)' } },
  dayz: { docsTitle: 'DayZ', console: { transport: 'battleye', port: 2305, title: 'DayZ' } },
  arma3: { docsTitle: 'Arma 3', console: { transport: 'battleye', port: 2305, title: 'Arma 3' } },
  custom: { docsTitle: 'Any other game' },
  none: { docsTitle: 'Any other game' },
} as const satisfies Record<string, GameEntry>;

export type GameName = keyof typeof GAMES;

/** The names as a tuple, for the schema's enum of `players.preset`. */
export const GAME_NAMES = Object.keys(GAMES) as [GameName, ...GameName[]];

/** The config's `players` section as far as choosing the game goes. */
interface GameChoice {
  readonly preset: GameName;
  /** `custom` only: the console command that lists players. */
  readonly command?: string | undefined;
  /** `custom` only: a regular expression with a named group "id". */
  readonly pattern?: string | undefined;
}

/**
 * The game of one server. Call it once per server: the Minecraft preset remembers which
 * list command the server understood.
 */
export function gameFor(players: GameChoice): Game {
  switch (players.preset) {
    case 'minecraft':
      return createMinecraftGame();
    case 'source':
      return sourceGame;
    case 'ark':
      return arkGame;
    case 'palworld':
      return palworldGame;
    case 'squad':
      return squadGame;
    case 'conan':
      return conanGame;
    case 'factorio':
      return factorioGame;
    case 'rust':
      return rustGame;
    case 'zomboid':
      return zomboidGame;
    case '7dtd':
      return sevenDaysGame;
    case 'terraria':
      return terrariaGame;
    case 'dayz':
      return dayzGame;
    case 'arma3':
      return arma3Game;
    case 'none':
      return noneGame;
    case 'custom':
      if (!players.command || !players.pattern) {
        throw new ConfigError('players.preset "custom" needs both players.command and players.pattern; add them to the config file');
      }
      return createCustomGame(players.command, players.pattern);
    default: {
      const unknown: never = players.preset;
      throw new ConfigError(`players.preset "${String(unknown)}" is not a known preset; use one of ${GAME_NAMES.join(', ')}`);
    }
  }
}
