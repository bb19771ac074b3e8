import { battleyeGame } from './battleye-game.js';
import { defineGame } from './record.js';

/**
 * Arma 3 over BattlEye RCon. Besides DayZ's (`#shutdown`, `#restart`, `#lock`, `#exec`, `#init`):
 * `#restartserver` and `#shutdownserver` stop the server process, `#mission`,
 * `#missions` and `#reassign` end the mission for everyone.
 */
const arma3Game = battleyeGame('arma3', [
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

export const arma3Record = defineGame({
  id: 'arma3',
  docsTitle: 'Arma 3',
  console: { transport: 'battleye', port: 2305, title: 'Arma 3' },
  forServer: () => arma3Game,
});
