import { battleyeGame } from './battleye-game.js';
import { defineGame } from './record.js';

/**
 * DayZ over BattlEye RCon. `#shutdown` stops the server, `#lock` keeps everyone out, `#exec` runs
 * any server command (`#exec ban …`), `#init` reloads the server config, `#restart` restarts the
 * mission.
 */
const dayzGame = battleyeGame('dayz', ['#shutdown', '#restart', '#lock', '#exec', '#init']);

export const dayzRecord = defineGame({
  id: 'dayz',
  docsTitle: 'DayZ',
  console: { transport: 'battleye', port: 2305, title: 'DayZ' },
  demo: {
    title: 'DayZ',
    online: 'Survivor',
    joiner: 'Smith, John',
    absent: 'Ghost',
    purchases: [
      { command: 'shop give "Survivor" AKM', player: 'Survivor', offlineExecute: false },
      { command: 'shop give "Survivor" Mag_AKM_30Rnd 3', player: 'Survivor', offlineExecute: true },
      { command: 'shop give "Smith, John" BakedBeansCan 5', player: 'Smith, John', offlineExecute: false },
      { command: 'shop give "Ghost" AKM', player: 'Ghost', offlineExecute: true },
    ],
    thanks: 'say -1 Thanks for supporting the server!',
    // The answers of the store mod the demo's simulator stands in for (src/demo/battleye-store-mod.ts).
    failurePatterns: ['is not on the server$'],
  },
  forServer: () => dayzGame,
});
