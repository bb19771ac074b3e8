import type { SimAnswer } from '../rcon-answers.js';
import type { RconWorld } from '../rcon-world.js';

/**
 * Project Zomboid's console over RCON, enough for listings and deliveries: `players`, `additem`,
 * `servermsg`, and the console's answer to anything else. Answers follow what the game prints:
 * "Players connected (N):" then "-name" lines; "Item X Added in Y's inventory."; "No such user"
 * for a player who is not online; "Unknown command <name>".
 */

/** `additem "alice" "Base.Axe" 2`: quoted or bare arguments, as the console takes them. */
function argumentsOf(line: string): string[] {
  return [...line.matchAll(/"([^"]*)"|(\S+)/g)].map((match) => match[1] ?? match[2] ?? '');
}

export function runZomboidCommand(line: string, { players }: RconWorld): SimAnswer {
  const [root = '', ...args] = argumentsOf(line.trim());
  switch (root.toLowerCase()) {
    case 'players': {
      const online = players.list();
      return { text: [`Players connected (${online.length}): `, ...online.map((name) => `-${name}`)].join('\n') };
    }
    case 'additem': {
      const [user = '', item = ''] = args;
      const player = players.list().find((name) => name.toLowerCase() === user.toLowerCase());
      if (!player) return { text: 'No such user' };
      if (!/^[A-Za-z]+\.[A-Za-z0-9_]+$/.test(item)) return { text: `Item ${item} doesn't exist.` };
      return { text: `Item ${item} Added in ${player}'s inventory.` };
    }
    case 'servermsg':
      return { text: 'Message sent.' };
    default:
      return { text: `Unknown command ${root}` };
  }
}
