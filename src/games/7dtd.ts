import { ofPlayers, type Game, type OnlineIds } from './game.js';
import { unexpectedAnswer } from './errors.js';
import { splitLines } from './text.js';
import { defineGame } from './record.js';

/**
 * 7 Days to Die `listplayers` (`lp`), as its ConsoleCmdListPlayers writes it (decompiled server
 * code), one row per player and a last line `Total of N in the game`:
 *
 *   0. id=171, Name, pos=(…), rot=(…), remote=True, health=100, deaths=0, zombies=0, players=0,
 *      score=0, level=1, pltfmid=Steam_7656…, crossid=EOS_…, ip=…, ping=…
 *
 * Older versions print `steamid=7656…` in place of pltfmid and crossid; a player whose client is
 * gone reads `<unknown>` there. Names may hold anything, ", " and "pos=(" included, so a name is
 * everything between `id=N, ` and the LAST `, pos=(`: what follows it is the server's own
 * numbers and ids, never a player's text.
 */
const ROW_START = /^\d+\. id=-?\d+, /;
const TOTAL = /^Total of \d+ in the game$/;
const POSITION = ', pos=(';

interface SevenDaysRow {
  readonly name: string;
  /** pltfmid (or the old steamid) as printed, undefined when absent or `<unknown>`. */
  readonly platformId: string | undefined;
  readonly crossId: string | undefined;
}

function parseSevenDaysRow(line: string): SevenDaysRow | null {
  const start = ROW_START.exec(line);
  const position = line.lastIndexOf(POSITION);
  if (!start || position < start[0].length) return null;
  const name = line.slice(start[0].length, position);
  const fields = line.slice(position);
  const known = (value: string | undefined) => (value === undefined || value === '<unknown>' ? undefined : value);
  return {
    name,
    platformId: known(/, (?:pltfmid|steamid)=([^,\s]+)/.exec(fields)?.[1]),
    crossId: known(/, crossid=([^,\s]+)/.exec(fields)?.[1]),
  };
}

/**
 * Every player's identifiers: the name, the platform id (a Steam id without its `Steam_` prefix,
 * so a SteamID64 as stores know it; other platforms' ids such as `XBL_…` or `PSN_…` as printed)
 * and the cross-platform id as printed (`EOS_…`). Null when the answer has no `Total of` line.
 */
export function parseSevenDaysPlayers(answer: string): OnlineIds | null {
  const lines = splitLines(answer);
  const total = lines.findIndex((line) => TOTAL.test(line.trim()));
  if (total < 0) return null;
  const ids: string[] = [];
  let players = 0;
  for (const line of lines.slice(0, total)) {
    const row = parseSevenDaysRow(line);
    if (!row) continue;
    players++;
    if (row.name.trim() !== '') ids.push(row.name);
    if (row.platformId) ids.push(row.platformId.replace(/^Steam_/, ''));
    if (row.crossId) ids.push(row.crossId);
  }
  return ofPlayers(ids, players);
}

/**
 * shutdown stops the server; kickall and killall hit every player at once; admin, cp
 * (commandpermission), webpermission and webtokens hand out admin rights to the console or the
 * web dashboard; sg (setgamepref) and sgs (setgamestat) rewrite the running server's settings;
 * `ban add` locks a player out. None is a purchase. saveworld stays allowed: it only saves, as the
 * server does on its own schedule. `exit` never reaches the console: the executor refuses it,
 * since it would end porter's own session.
 */
const SEVEN_DAYS_DEFAULT_DENY: readonly string[] = [
  'shutdown',
  'kickall',
  'killall',
  'admin',
  'commandpermission',
  'cp',
  'webpermission',
  'webtokens',
  'setgamepref',
  'sg',
  'setgamestat',
  'sgs',
  'ban add',
];

export const sevenDaysGame: Game = {
  name: '7dtd',
  identifier: 'player name, platform id (SteamID64 for Steam) and cross-platform id (EOS_…), all three sent for every player',
  splitsOnSemicolon: false,
  // The console's own errors (unknown command, a command that threw, an unclosed quote) all start
  // with "*** ERROR: "; the rest are what give and givexp answer when they did nothing.
  failurePatterns: [
    /^\*\*\* ERROR: /m,
    /^Playername or entity id not found/im,
    /^Item not found/im,
    /^Wrong number of arguments/im,
    /^Amount is not an integer/im,
    /^Quality is not an integer/im,
    /^xp amount must be/im,
  ],
  defaultDeny: SEVEN_DAYS_DEFAULT_DENY,
  async readPlayers(query) {
    const answer = await query('listplayers');
    const ids = parseSevenDaysPlayers(answer);
    if (!ids) throw unexpectedAnswer('7dtd', 'listplayers', 'a last line "Total of N in the game"', answer);
    return ids;
  },
};

export const sevenDaysRecord = defineGame({
  id: '7dtd',
  docsTitle: '7 Days to Die',
  console: { transport: 'telnet', port: 8081, title: '7 Days to Die' },
  demo: {
    title: '7 Days to Die',
    online: 'Alice',
    joiner: 'Bob',
    absent: 'Ghost',
    purchases: [
      { command: 'give Alice casinoCoin 500', player: 'Alice', offlineExecute: false },
      { command: 'givexp Alice 5000', player: 'Alice', offlineExecute: true },
      { command: 'give Bob gunPistol 1', player: 'Bob', offlineExecute: false },
      { command: 'give Ghost medicalFirstAidKit 2', player: 'Ghost', offlineExecute: true },
    ],
    thanks: 'say "Thanks for supporting the server!"',
  },
  forServer: () => sevenDaysGame,
});
