import { battleyeGame } from './battleye-game.js';

/**
 * Arma 3 over BattlEye RCon. Besides DayZ's (`#shutdown`, `#restart`, `#lock`, `#exec`, `#init`):
 * `#restartserver` and `#shutdownserver` stop the server process, `#mission`,
 * `#missions` and `#reassign` end the mission for everyone.
 */
export const arma3Game = battleyeGame('arma3', [
  '#shutdown',
  '#restart',
  '#restartserver',
  '#shutdownserver',
  '#lock',
  '#exec',
  '#init',
  '#mission',
  '#missions',
  '#reassign',
]);
