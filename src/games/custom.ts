import type { Game } from './game.js';
import { ConfigError, messageOf } from '../errors.js';
import { defineGame } from './record.js';
import { splitLines } from './text.js';

/**
 * The owner's own player list: `command` is sent as a query and `pattern` (a regular
 * expression with a named group `id`) is applied to every line of the answer; each line that
 * matches contributes its `id`. No failure patterns and no default deny list: the owner knows
 * the game, porter does not.
 */
function createCustomGame(command: string, pattern: string): Game {
  let re: RegExp;
  try {
    re = new RegExp(pattern);
  } catch (error) {
    throw new ConfigError(`players.pattern is not a valid regular expression (${messageOf(error)}); fix it in the config file`);
  }
  if (!re.source.includes('(?<id>')) {
    throw new ConfigError('players.pattern needs a named group (?<id>...) that captures the identifier; add one in the config file');
  }
  return {
    name: 'custom',
    identifier: 'whatever players.pattern captures in its "id" group',
    splitsOnSemicolon: false,
    failurePatterns: [],
    defaultDeny: [],
    async readPlayers(query) {
      return parseCustomLines(await query(command), re);
    },
  };
}

export function parseCustomLines(answer: string, re: RegExp): string[] {
  const ids: string[] = [];
  for (const line of splitLines(answer)) {
    const id = re.exec(line)?.groups?.id;
    if (id !== undefined && id.trim() !== '') ids.push(id);
  }
  return ids;
}

export const customRecord = defineGame({
  id: 'custom',
  docsTitle: 'Any other game',
  forServer: ({ command, pattern }) => {
    if (!command || !pattern) {
      throw new ConfigError('players.preset "custom" needs both players.command and players.pattern; add them to the config file');
    }
    return createCustomGame(command, pattern);
  },
});
