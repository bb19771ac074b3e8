import { ConfigError } from '../errors.js';
import type { Game } from './game.js';
import type { GameRecord, PlayersChoice } from './record.js';
import { sevenDaysRecord } from './7dtd.js';
import { arkRecord } from './ark.js';
import { arma3Record } from './arma3.js';
import { conanRecord } from './conan.js';
import { customRecord } from './custom.js';
import { dayzRecord } from './dayz.js';
import { factorioRecord } from './factorio.js';
import { minecraftRecord } from './minecraft.js';
import { noneRecord } from './none.js';
import { palworldRecord } from './palworld.js';
import { rustRecord } from './rust.js';
import { sourceRecord } from './source.js';
import { squadRecord } from './squad.js';
import { terrariaRecord } from './terraria.js';
import { zomboidRecord } from './zomboid.js';

/**
 * Every game porter knows, one record each (record.ts), in the order the schema lists
 * `players.preset`, init offers the games and the demo its `--game` choices.
 */
const RECORDS = [
  minecraftRecord,
  sourceRecord,
  arkRecord,
  palworldRecord,
  squadRecord,
  conanRecord,
  factorioRecord,
  rustRecord,
  zomboidRecord,
  sevenDaysRecord,
  terrariaRecord,
  dayzRecord,
  arma3Record,
  customRecord,
  noneRecord,
] as const satisfies readonly GameRecord[];

type Records = (typeof RECORDS)[number];

export type GameName = Records['id'];

/** The records by id: the name `players.preset` gives each game. */
export const GAMES = Object.fromEntries(RECORDS.map((record) => [record.id, record])) as { readonly [R in Records as R['id']]: R };

/** The names as a tuple, for the schema's enum of `players.preset`. */
export const GAME_NAMES = RECORDS.map((record) => record.id) as [GameName, ...GameName[]];

/** The config's `players` section as far as choosing the game goes. */
interface GameChoice extends PlayersChoice {
  readonly preset: GameName;
}

/**
 * The game of one server. Call it once per server: the Minecraft preset remembers which
 * list command the server understood.
 */
export function gameFor(players: GameChoice): Game {
  const record: GameRecord | undefined = GAMES[players.preset];
  if (!record) {
    throw new ConfigError(`players.preset "${String(players.preset)}" is not a known preset; use one of ${GAME_NAMES.join(', ')}`);
  }
  return record.forServer(players);
}
