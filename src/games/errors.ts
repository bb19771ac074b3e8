import { PorterError } from '../errors.js';
import { excerpt } from './text.js';

/**
 * The game server answered the player-list command with something the preset does not
 * recognise. The cache turns this into an empty list plus a warning, so offline commands still run.
 */
export class PlayerListError extends PorterError {
  override readonly code = 'E_PLAYER_LIST';
}

export function unexpectedAnswer(preset: string, command: string, expected: string, answer: string): PlayerListError {
  return new PlayerListError(
    `the ${preset} preset did not understand the answer to "${command}" (expected ${expected}); ` +
      `got "${excerpt(answer, 200)}". Check players.preset for this server, or use players.preset "custom" ` +
      `with a command and a pattern that fit your server`,
  );
}
