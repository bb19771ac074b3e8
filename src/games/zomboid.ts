import type { Game } from './game.js';
import { unexpectedAnswer } from './errors.js';
import { splitLines } from './text.js';
import { defineGame } from './record.js';

/**
 * Project Zomboid's `players`: a header `Players connected (N):`, then one line per player, the
 * username after a dash (`-alice`). Usernames are the only identifier the console gives. Seen in
 * public Zomboid admin tools' parsers and fake servers ("Players connected (2):\n-alice\n-bob").
 */
export function parseZomboidPlayers(answer: string): string[] | null {
  const lines = splitLines(answer);
  const header = lines.findIndex((line) => /^Players connected \(\d+\):/i.test(line.trim()));
  if (header < 0) return null;
  const ids: string[] = [];
  for (const line of lines.slice(header + 1)) {
    const match = /^-(.+)$/.exec(line.trim());
    if (match) ids.push(match[1]!.trim());
  }
  return ids;
}

/**
 * quit stops the server; grantadmin, setaccesslevel and changeoption/reloadoptions hand over
 * admin rights or rewrite the server's settings; banuser and banid lock players out. None is a
 * purchase.
 */
const ZOMBOID_DEFAULT_DENY: readonly string[] = [
  'quit',
  'grantadmin',
  'setaccesslevel',
  'changeoption',
  'reloadoptions',
  'banuser',
  'banid',
];

export const zomboidGame: Game = {
  name: 'zomboid',
  rconPassword: 'Project Zomboid: RCONPassword in Server/<server name>.ini',
  identifier: 'username (as `players` lists it)',
  splitsOnSemicolon: false,
  // The console's own words for a command that did nothing (additem, addxp, addvehicle, …).
  failurePatterns: [/^No such user/im, /^User .* not found/im, /^Item .* doesn't exist/im, /^Unknown command/im],
  defaultDeny: ZOMBOID_DEFAULT_DENY,
  async readPlayers(query) {
    const answer = await query('players');
    const ids = parseZomboidPlayers(answer);
    if (!ids) throw unexpectedAnswer('zomboid', 'players', 'the header "Players connected (N):"', answer);
    return ids;
  },
};

export const zomboidRecord = defineGame({
  id: 'zomboid',
  docsTitle: 'Project Zomboid',
  console: { transport: 'rcon', port: 27015, title: 'Project Zomboid' },
  demo: {
    title: 'Project Zomboid',
    online: 'alice',
    joiner: 'bob',
    absent: 'ghost',
    purchases: [
      { command: 'additem "alice" "Base.Axe"', player: 'alice', offlineExecute: false },
      { command: 'additem "alice" "Base.Plank" 10', player: 'alice', offlineExecute: true },
      { command: 'additem "bob" "Base.Hammer"', player: 'bob', offlineExecute: false },
      { command: 'additem "ghost" "Base.Axe"', player: 'ghost', offlineExecute: true },
    ],
    thanks: 'servermsg "Thanks for supporting the server!"',
  },
  forServer: () => zomboidGame,
});
