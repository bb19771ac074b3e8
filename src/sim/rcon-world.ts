import type { SimAnswer } from './rcon-answers.js';
import type { SimPlayers } from './rcon-players.js';

/** What a simulated RCON game server keeps between commands. */
export interface RconWorld {
  readonly players: SimPlayers;
  readonly maxPlayers: number;
  /** EssentialsX balances by lowercase name (Minecraft). */
  readonly balances: Map<string, number>;
}

/** A game's console over RCON: what it answers to one command line (consoles/<game id>.ts). */
export type RconConsole = (line: string, world: RconWorld) => SimAnswer;
