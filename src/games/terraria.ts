import { ofPlayers, type Game, type OnlineIds } from './game.js';
import { unexpectedAnswer } from './errors.js';
import { defineGame } from './record.js';

/**
 * The REST route TShock lists players at. The `tshock` executor answers a query for exactly this
 * text with the route's JSON instead of running it as a console command (no TShock command starts
 * with `/v2/`), so the game reads players the way every other game does: through `query`.
 */
export const TSHOCK_PLAYER_LIST_ROUTE = '/v2/players/list';

/**
 * TShock's `/v2/players/list` (TShockAPI/Rest/RestManager.cs, PlayerListV2 and PlayerFilter):
 * `{"status": "200", "players": [{"nickname", "username", "group", "active", "state", "team"}]}`,
 * one entry per connection slot in use. `nickname` is the character's name (any text: spaces,
 * commas, unicode); `username` is the TShock account the player logged in to, "" when not logged
 * in. A slot still connecting may be inactive or have no name yet: only active entries count.
 * Both names are identifiers, so a store may address a buyer by either.
 */
export function parseTShockPlayerList(answer: string): OnlineIds | null {
  let value: unknown;
  try {
    value = JSON.parse(answer);
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null) return null;
  const players = (value as { players?: unknown }).players;
  if (!Array.isArray(players)) return null;
  const ids: string[] = [];
  let online = 0;
  for (const entry of players) {
    if (typeof entry !== 'object' || entry === null) continue;
    const { nickname, username, active } = entry as Record<string, unknown>;
    if (active === false) continue;
    const before = ids.length;
    if (typeof nickname === 'string' && nickname.trim() !== '') ids.push(nickname);
    if (typeof username === 'string' && username.trim() !== '') ids.push(username);
    if (ids.length > before) online++;
  }
  return ofPlayers(ids, online);
}

/**
 * TShock's own words for a command that did nothing (TShockAPI/Commands.cs, English texts). A REST
 * command runs as a console-like user, so commands that need a player body (`/item`, `/tp`) answer
 * "You must use this command in-game."; a token whose group lacks a command's permission gets
 * "You do not have access to this command.".
 */
const TERRARIA_FAILURE_PATTERNS: readonly RegExp[] = [
  /^Invalid command entered\. Type \S*help for a list of valid commands\./im,
  /^You entered a space after \S* instead of a command\./im,
  /^You do not have access to this command\./im,
  /^You must use this command in-game\./im,
  /^Invalid syntax[.!]/im,
  /^Invalid (?:player|target player|item type|item|mob type|group)[.!]/im,
  /^More than one match found -- unable to decide which is correct/im,
  /^Player does not have free slots!/im,
  /^You cannot spawn banned items\./im,
  /^Missing (?:item name\/id|player name)\./im,
  /^Could not find any players? named /im,
  /^Sorry, an error occurred: /im,
];

/**
 * off / exit / stop (and their -nosave forms) stop the server; user, group, tempgroup, su, sudo
 * and setup hand out accounts or permissions (sudo runs the rest as superadmin); serverpassword,
 * whitelist, reload and rest change who may join or use the API; ban locks players out. None is
 * a purchase.
 */
const TERRARIA_DEFAULT_DENY: readonly string[] = [
  'off',
  'exit',
  'stop',
  'off-nosave',
  'exit-nosave',
  'stop-nosave',
  'user',
  'group',
  'tempgroup',
  'su',
  'sudo',
  'setup',
  'serverpassword',
  'whitelist',
  'reload',
  'rest',
  'ban',
];

export const terrariaGame: Game = {
  name: 'terraria',
  identifier: 'character name or TShock account name',
  splitsOnSemicolon: false,
  failurePatterns: TERRARIA_FAILURE_PATTERNS,
  defaultDeny: TERRARIA_DEFAULT_DENY,
  async readPlayers(query) {
    const answer = await query(TSHOCK_PLAYER_LIST_ROUTE);
    const ids = parseTShockPlayerList(answer);
    if (!ids) throw unexpectedAnswer('terraria', TSHOCK_PLAYER_LIST_ROUTE, 'a JSON object with a "players" array', answer);
    return ids;
  },
};

export const terrariaRecord = defineGame({
  id: 'terraria',
  docsTitle: 'Terraria',
  console: { transport: 'tshock', port: 7878, title: 'Terraria (TShock)' },
  demo: {
    title: 'Terraria TShock',
    online: 'Ann',
    joiner: 'Bob',
    absent: 'Ghost',
    purchases: [
      { command: '/give "Terra Blade" "Ann" 1', player: 'Ann', offlineExecute: false },
      { command: '/give "Healing Potion" "Ann" 30', player: 'Ann', offlineExecute: true },
      { command: '/give "Life Crystal" "Bob" 5', player: 'Bob', offlineExecute: false },
      { command: '/give Zenith "Ghost" 1', player: 'Ghost', offlineExecute: true },
    ],
    thanks: '/say Thanks for supporting the server!',
  },
  forServer: () => terrariaGame,
});
