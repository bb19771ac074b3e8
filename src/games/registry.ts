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

/** Every game porter knows, as `players.preset` names it in the config. */
export const GAME_NAMES = [
  'minecraft',
  'source',
  'ark',
  'palworld',
  'squad',
  'conan',
  'factorio',
  'rust',
  'zomboid',
  '7dtd',
  'terraria',
  'dayz',
  'arma3',
  'custom',
  'none',
] as const;

export type GameName = (typeof GAME_NAMES)[number];

/** The config's `players` section as far as choosing the game goes. */
export interface GameChoice {
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
