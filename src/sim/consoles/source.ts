import type { SimAnswer } from '../rcon-answers.js';
import { fakeSteamId64 } from '../rcon-players.js';
import type { RconWorld } from '../rcon-world.js';

/** A Source game's console (srcds `status`, `say`, `kick`, SourceMod's `sm_`): enough for listings and deliveries. */

/** SteamID64 → the STEAM_1:Y:Z form srcds prints in `status`. */
function steam2(id64: string): string {
  const account = BigInt(id64) - 76561197960265728n;
  return `STEAM_1:${account % 2n}:${account / 2n}`;
}

function sourceStatus({ players, maxPlayers }: RconWorld): string {
  const online = players.list();
  const rows = online.map((name, index) => {
    const userid = String(index + 2).padStart(3);
    return `#${userid} ${index + 1} "${name}" ${steam2(fakeSteamId64(name))} 12:34 45 0 active 196608 198.51.100.${index + 10}:27005`;
  });
  return [
    'hostname: porter simulated server',
    'version : 1.38.8.1/13881 1575/8853 secure  [G:1:7654321] ',
    'udp/ip  : 0.0.0.0:27015  (public ip: 203.0.113.10)',
    'os      :  Linux',
    'type    :  community dedicated',
    'map     : de_dust2',
    `players : ${online.length} humans, 0 bots (${maxPlayers}/0 max) (not hibernating)`,
    '',
    '# userid name uniqueid connected ping loss state rate adr',
    ...rows,
    '#end',
    '',
  ].join('\n');
}

export function runSourceCommand(line: string, world: RconWorld): SimAnswer {
  const [root = '', ...args] = line.trim().split(/\s+/);
  switch (root.toLowerCase()) {
    case 'status':
      return { text: sourceStatus(world) };
    case 'say':
      return { text: '' };
    case 'echo':
      return { text: `${args.join(' ')}\n` };
    case 'kickid':
    case 'kick':
      return { text: args.length ? `Kicked ${args.join(' ')}\n` : 'Usage:  kick < name >\n' };
    default:
      return root.startsWith('sm_') ? { text: `[SM] ${root} done.\n` } : { text: `Unknown command "${root}"\n` };
  }
}
