import { battleyeGame } from './battleye-game.js';

/**
 * DayZ over BattlEye RCon. `#shutdown` stops the server, `#lock` keeps everyone out, `#exec` runs
 * any server command (`#exec ban …`), `#init` reloads the server config, `#restart` restarts the
 * mission.
 */
export const dayzGame = battleyeGame('dayz', ['#shutdown', '#restart', '#lock', '#exec', '#init']);
