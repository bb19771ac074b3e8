import type { Logger } from 'pino';
import type { ResolvedServer } from '../config/schema.js';
import type { Game } from '../games/game.js';
import type { Executor } from '../protocols/executor.js';
import { execPlayerReader } from './exec-source.js';

type PlayerReader = (signal?: AbortSignal) => Promise<string[]>;

/**
 * Where one server's online identifiers come from: its player-list script when the config names
 * one, else its game's listing over the executor (nothing for the game "none"). The daemon,
 * `porter check` and `porter players` all read players through this.
 */
export function playerReader(
  players: ResolvedServer['players'],
  game: Game,
  executor: Pick<Executor, 'query'>,
  logger: Logger,
): PlayerReader {
  if (players.exec) return execPlayerReader(players.exec, { logger });
  if (players.preset === 'none') return () => Promise.resolve([]);
  return (signal) => game.readPlayers((command) => executor.query(command, signal));
}

/** How `porter check` names the source. */
export function playerSourceLabel(players: ResolvedServer['players']): string {
  return players.exec ? `script ${players.exec[0]}` : `preset ${players.preset}`;
}
