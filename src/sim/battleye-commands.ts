import type { BattlEyeRoster } from './battleye-roster.js';
import { runSimCommand } from './rcon-answers.js';

/** What the simulated BattlEye server does with one command: its answer, and the server messages it prints. */
export interface BattlEyeAnswer {
  readonly text: string;
  readonly messages?: readonly string[];
}

const GUID = /^[0-9a-f]{32}$/i;
const IPV4 = /^\d{1,3}(?:\.\d{1,3}){3}$/;

/**
 * BattlEye's own commands, answered as BattlEye does: `players` with its table; `say`, `kick` and
 * `ban` with nothing, their effect showing as server messages (`RCon admin #0: (Global) …`,
 * `Player #1 Bob (…) has been kicked by BattlEye: Admin Kick (…)`, as BattlEye prints them to
 * RCon clients and open-source tools parse them); `addBan` with `Invalid ban format` when its
 * target is neither a GUID nor an IPv4 address (the answer conqp/rcon-rs checks for). Game
 * commands (`#shutdown`, `#lock`, …) answer nothing. The answer to a command neither knows,
 * `Unknown command`, is this simulator's stand-in: what a real server prints there depends on the
 * game and its mods.
 */
export function runBattlEyeCommand(command: string, roster: BattlEyeRoster, adminId: number): BattlEyeAnswer {
  const sim = runSimCommand(command);
  if (sim) return { text: sim.text };
  const [root = '', ...args] = command.trim().split(/\s+/);
  switch (root.toLowerCase()) {
    case 'players':
      return { text: roster.table() };
    case 'say': {
      const [target, ...words] = args;
      const text = words.join(' ');
      if (target === '-1') return { text: '', messages: [`RCon admin #${adminId}: (Global) ${text}`] };
      const seat = roster.bySlot(Number(target));
      return { text: '', messages: seat ? [`RCon admin #${adminId}: (To ${seat.name}) ${text}`] : [] };
    }
    case 'kick':
    case 'ban': {
      const [target, ...words] = args;
      const seat = /^\d+$/.test(target ?? '') ? roster.bySlot(Number(target)) : undefined;
      if (!seat) return { text: '' };
      roster.leave(seat.name);
      const reason = words.length > 0 ? words.join(' ') : root.toLowerCase() === 'ban' ? 'Admin Ban' : 'Admin Kick';
      return { text: '', messages: [`Player #${seat.slot} ${seat.name} (${seat.guid}) has been kicked by BattlEye: ${reason}`] };
    }
    case 'addban': {
      const [target] = args;
      if (!target || !(GUID.test(target) || IPV4.test(target))) return { text: 'Invalid ban format' };
      return { text: '' };
    }
    default:
      if (root.startsWith('#')) return { text: '' };
      return { text: 'Unknown command' };
  }
}
