import type { ResolvedServer } from '../config/schema.js';
import { ConfigError } from '../errors.js';
import type { GamePreset } from './game.js';
import { arkPreset } from './ark.js';
import { conanPreset } from './conan.js';
import { createCustomPreset } from './custom.js';
import { factorioPreset } from './factorio.js';
import { createMinecraftPreset } from './minecraft.js';
import { nonePreset } from './none.js';
import { palworldPreset } from './palworld.js';
import { rustPreset } from './rust.js';
import { sourcePreset } from './source.js';
import { squadPreset } from './squad.js';

/**
 * The preset for one server. Call it once per server: the Minecraft preset remembers which
 * list command the server understood.
 */
export function presetFor(players: ResolvedServer['players']): GamePreset {
  switch (players.preset) {
    case 'minecraft':
      return createMinecraftPreset();
    case 'source':
      return sourcePreset;
    case 'ark':
      return arkPreset;
    case 'palworld':
      return palworldPreset;
    case 'squad':
      return squadPreset;
    case 'conan':
      return conanPreset;
    case 'factorio':
      return factorioPreset;
    case 'rust':
      return rustPreset;
    case 'none':
      return nonePreset;
    case 'custom':
      if (!players.command || !players.pattern) {
        throw new ConfigError('players.preset "custom" needs both players.command and players.pattern; add them to the config file');
      }
      return createCustomPreset(players.command, players.pattern);
    default: {
      const unknown: never = players.preset;
      throw new ConfigError(`players.preset "${String(unknown)}" is not a known preset; use one of minecraft, source, ark, palworld, squad, conan, factorio, rust, custom, none`);
    }
  }
}
