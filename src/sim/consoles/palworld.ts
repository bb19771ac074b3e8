import type { SimAnswer } from '../rcon-answers.js';
import { fakeSteamId64 } from '../rcon-players.js';
import type { RconWorld } from '../rcon-world.js';

/** Palworld's console: `ShowPlayers` is CSV with a header; ids are made up but stable per name. */
export function runPalworldCommand(line: string, { players }: RconWorld): SimAnswer {
  const [root = '', ...args] = line.trim().split(/\s+/);
  switch (root.toLowerCase()) {
    case 'showplayers':
      return {
        text: [
          'name,playeruid,steamid',
          ...players.list().map((name) => `${name},${BigInt(fakeSteamId64(name)) % 4294967296n},${fakeSteamId64(name)}`),
        ]
          .join('\n')
          .concat('\n'),
      };
    case 'info':
      return { text: 'Welcome to Pal Server[v0.1.5.1] porter simulated server\n' };
    case 'broadcast':
      return { text: `Broadcasted: ${args.join(' ')}\n` };
    case 'kickplayer':
      return { text: `Kicked: ${args[0] ?? ''}\n` };
    case 'save':
      return { text: 'Complete Save\n' };
    default:
      return { text: `Unknown command: ${root}\n` };
  }
}
