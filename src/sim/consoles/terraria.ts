/**
 * The few TShock console commands the simulated TShock REST API understands, run as TShock runs a
 * `/v3/server/rawcmd` command: as a TSRestPlayer, a user with no body in the world whose output is
 * collected line by line. Texts and rules are TShock's (TShockAPI/Commands.cs HandleCommand,
 * ParseParameters, Give, Broadcast, ListConnectedPlayers; TSPlayer.FindByNameOrID;
 * Utils.GetItemByIdOrName; TSPlayer.SendMultipleMatchError), in English. The item table is a small
 * sample of Terraria's (id, name, stack size).
 */

/** One connection slot in use, as `/v2/players/list` shows it. */
export interface Terrarian {
  /** The character's name. */
  readonly nickname: string;
  /** The TShock account logged in to; "" when not logged in. */
  readonly username: string;
  readonly group: string;
  /** False while the client is still connecting. */
  readonly active: boolean;
}

interface TShockWorld {
  /** In slot order (the index `/who -i` shows). */
  readonly players: readonly Terrarian[];
  readonly maxPlayers: number;
}

interface SimItem {
  readonly id: number;
  readonly name: string;
  readonly maxStack: number;
}

const ITEMS: readonly SimItem[] = [
  { id: 1, name: 'Iron Pickaxe', maxStack: 1 },
  { id: 2, name: 'Dirt Block', maxStack: 9999 },
  { id: 8, name: 'Torch', maxStack: 9999 },
  { id: 28, name: 'Lesser Healing Potion', maxStack: 9999 },
  { id: 29, name: 'Life Crystal', maxStack: 9999 },
  { id: 73, name: 'Gold Coin', maxStack: 100 },
  { id: 74, name: 'Platinum Coin', maxStack: 9999 },
  { id: 188, name: 'Healing Potion', maxStack: 9999 },
  { id: 757, name: 'Terra Blade', maxStack: 1 },
  { id: 3507, name: 'Copper Shortsword', maxStack: 1 },
  { id: 4956, name: 'Zenith', maxStack: 1 },
];

/** ItemID.Count in Terraria 1.4.4: ids at or above it are no item at all. */
const ITEM_ID_COUNT = 5456;

const SPECIFIER = '/';

/** Commands that only read: `executed` flags them so tests can count deliveries. */
const READ_ONLY = new Set(['who', 'playing', 'online']);

/** True for a command text (specifier included) that only reads. */
export function isReadOnlyTShockCommand(text: string): boolean {
  return READ_ONLY.has(commandName(text.slice(1)));
}

/** The lines TShock sends back for one command text; the first character is the specifier, whatever it is. */
export function runTShockCommand(text: string, world: TShockWorld): string[] {
  const out: string[] = [];
  const cmdText = text.slice(1);
  const space = [...cmdText].findIndex(isWhiteSpace);
  if (space === 0) {
    return [`You entered a space after ${SPECIFIER} instead of a command. Type ${SPECIFIER}help for a list of valid commands.`];
  }
  const name = commandName(cmdText);
  const args = space < 0 ? [] : parseParameters(cmdText.slice(space));
  switch (name) {
    case 'give':
    case 'g':
      give(args, world, out);
      break;
    case 'item':
    case 'i':
      out.push('You must use this command in-game.');
      break;
    case 'broadcast':
    case 'bc':
    case 'say':
      // TShock broadcasts to the players and the console; the REST user is neither, so it sees nothing.
      break;
    case 'who':
    case 'playing':
    case 'online':
      listPlayers(world, out);
      break;
    default:
      out.push(`Invalid command entered. Type ${SPECIFIER}help for a list of valid commands.`);
  }
  return out;
}

function commandName(cmdText: string): string {
  const space = [...cmdText].findIndex(isWhiteSpace);
  return (space < 0 ? cmdText : [...cmdText].slice(0, space).join('')).toLowerCase();
}

function isWhiteSpace(c: string): boolean {
  return c === ' ' || c === '\t' || c === '\n';
}

/** Commands.ParseParameters: whitespace splits, quotes group, a backslash escapes `"`, space and `\`. */
export function parseParameters(text: string): string[] {
  const ret: string[] = [];
  let sb = '';
  let instr = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '\\' && ++i < text.length) {
      const next = text[i]!;
      if (next !== '"' && next !== ' ' && next !== '\\') sb += '\\';
      sb += next;
    } else if (c === '"') {
      instr = !instr;
      if (!instr || sb.length > 0) {
        ret.push(sb);
        sb = '';
      }
    } else if (isWhiteSpace(c) && !instr) {
      if (sb.length > 0) {
        ret.push(sb);
        sb = '';
      }
    } else {
      sb += c;
    }
  }
  if (sb.length > 0) ret.push(sb);
  return ret;
}

function give(args: string[], world: TShockWorld, out: string[]): void {
  if (args.length < 2) {
    out.push(`Invalid syntax. Proper syntax: ${SPECIFIER}give <item type/id> <player> [item amount] [prefix id/name]`);
    return;
  }
  if (args[0] === '') {
    out.push('Missing item name/id.');
    return;
  }
  if (args[1] === '') {
    out.push('Missing player name.');
    return;
  }
  const items = findItems(args[0]!);
  const target = args[1]!;
  const rest = args.slice(2);
  let amount = rest.length >= 1 ? parseAmount(rest[0]!) : 0;
  if (items.length === 0) {
    out.push('Invalid item type!');
    return;
  }
  if (items.length > 1) {
    multipleMatch(
      items.map((item) => `${item.name}(${item.id})`),
      out,
    );
    return;
  }
  const item = items[0]!;
  const players = findPlayers(target, world);
  if (players.length === 0) {
    out.push('Invalid player!');
    return;
  }
  if (players.length > 1) {
    multipleMatch(
      players.map((player) => player.nickname),
      out,
    );
    return;
  }
  if (amount === 0 || amount > item.maxStack) amount = item.maxStack;
  out.push(amount === 1 ? `Gave ${players[0]!.nickname} 1 ${item.name}.` : `Gave ${players[0]!.nickname} ${amount} ${item.name}s.`);
}

/** int.TryParse: anything else is 0. */
function parseAmount(text: string): number {
  return /^\s*[-+]?\d+\s*$/.test(text) ? Number.parseInt(text, 10) : 0;
}

/** Utils.GetItemByIdOrName over the sample table: an id, else the exact name, else one prefix, else prefixes and substrings. */
function findItems(text: string): SimItem[] {
  if (/^\s*[-+]?\d+\s*$/.test(text)) {
    const id = Number.parseInt(text, 10);
    if (id >= ITEM_ID_COUNT) return [];
    const item = ITEMS.find((candidate) => candidate.id === id);
    return item ? [item] : [];
  }
  const lower = text.toLowerCase();
  const exact = ITEMS.find((item) => item.name.toLowerCase() === lower);
  if (exact) return [exact];
  const startsWith = ITEMS.filter((item) => item.name.toLowerCase().startsWith(lower));
  if (startsWith.length === 1) return startsWith;
  return [...startsWith, ...ITEMS.filter((item) => !item.name.toLowerCase().startsWith(lower) && item.name.toLowerCase().includes(lower))];
}

/**
 * TSPlayer.FindByNameOrID: `tsi:` an index only, `tsn:` an exact (case-sensitive) name, else the
 * player at that index and every player whose name starts with the text, case-insensitively.
 * There is no preference for an exact match: "Bob" matches "Bob" and "Bobby" both.
 */
function findPlayers(search: string, world: TShockWorld): Terrarian[] {
  let text = search.trim();
  const indexOnly = text.startsWith('tsi:');
  const nameOnly = text.startsWith('tsn:');
  if (indexOnly || nameOnly) text = text.slice(4);
  if (text === '') return [];
  const found: Terrarian[] = [];
  if (/^\d{1,3}$/.test(text)) {
    const player = world.players[Number.parseInt(text, 10)];
    if (player?.active) {
      if (indexOnly) return [player];
      found.push(player);
    }
  }
  const lower = text.toLowerCase();
  for (const player of world.players) {
    if (nameOnly && player.nickname === text) return [player];
    if (player.nickname.toLowerCase().startsWith(lower)) found.push(player);
  }
  return found;
}

function multipleMatch(terms: string[], out: string[]): void {
  out.push('More than one match found -- unable to decide which is correct: ');
  out.push(...linesFromTerms(terms));
  out.push('Use "my query" for items with spaces.');
  out.push('Use tsi:[number] or tsn:[username] to distinguish between user IDs and usernames.');
}

/** PaginationTools.BuildLinesFromTerms: terms joined by ", " into lines of under 80 characters. */
function linesFromTerms(terms: string[]): string[] {
  const lines: string[] = [];
  let line = '';
  for (const term of terms) {
    if (line.length + term.length + 2 < 80) {
      line += `${term}, `;
    } else {
      lines.push(line);
      line = `${term}, `;
    }
  }
  if (line.length > 0) lines.push(line.slice(0, -2));
  return lines;
}

function listPlayers(world: TShockWorld, out: string[]): void {
  const active = world.players.filter((player) => player.active);
  if (active.length === 0) {
    out.push('There are currently no players online.');
    return;
  }
  out.push(`Online Players ([c/AAFFAA:${active.length}]/${world.maxPlayers})`);
  out.push(...linesFromTerms(active.map((player) => player.nickname)));
}
