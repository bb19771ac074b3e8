import type { Game } from './game.js';
import { defineGame } from './record.js';

/**
 * No player list: every pull says nobody is online, so only commands that do not need the
 * player online are handed out. For servers that cannot tell (or scripts without players.exec).
 */
const noneGame: Game = {
  name: 'none',
  identifier: 'none (nobody is ever reported online)',
  splitsOnSemicolon: false,
  failurePatterns: [],
  defaultDeny: [],
  readPlayers() {
    return Promise.resolve([]);
  },
};

export const noneRecord = defineGame({ id: 'none', docsTitle: 'Any other game', forServer: () => noneGame });
