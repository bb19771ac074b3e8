import type { Game } from './game.js';
import { unexpectedAnswer } from './errors.js';
import { stripColourCodes } from './text.js';
import { defineGame } from './record.js';

/**
 * Minecraft Java edition.
 *
 * `list uuids` is preferred: it prints account names (`Name (uuid)`), while plain `list` prints
 * display names, which team prefixes and plugins decorate. On Bukkit-family servers a plugin may
 * take over `list` (Essentials does, with its own format), so the namespaced vanilla command is
 * tried next; plain `list` is the last resort for servers that know neither. The first command
 * whose answer parses is remembered, so an unknown command is sent at most once per start.
 */
const MINECRAFT_LIST_COMMANDS = ['list uuids', 'minecraft:list uuids', 'list'] as const;

/**
 * The vanilla answer, in every wording it has had (assets/minecraft/lang/en_us.json
 * `commands.list.players`): "There are N of a max of M players online: a, b" (1.17+),
 * "There are N of a max M players online: a, b" (1.13–1.16) and "There are N/M players online:"
 * with the names on the next line (1.12 and older).
 */
const HEADER = /There are (\d+)(?: of a max(?: of)? |\/)(\d+) players online:?/;
/** `commands.list.nameAndId`: "%s (%s)". */
const NAME_AND_UUID = /^(.+?) \(([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\)$/i;

/** The player names in a `list` / `list uuids` answer, or null when the answer is not a player list. */
export function parseMinecraftList(answer: string): string[] | null {
  const text = stripColourCodes(answer);
  const header = HEADER.exec(text);
  if (!header) return null;
  const rest = text.slice(header.index + header[0].length);
  const names: string[] = [];
  for (const entry of rest.split(/,|\r?\n/)) {
    const trimmed = entry.trim();
    if (trimmed === '') continue;
    names.push(NAME_AND_UUID.exec(trimmed)?.[1] ?? trimmed);
  }
  return names;
}

/**
 * Answers that mean the command did not do what it was sent for. Anchored at a line start: the
 * game puts its error first, and a successful answer that merely mentions such words (a chat
 * echo, a message text) must not turn a delivery into a failure. Wording from en_us.json
 * (`command.unknown.command`, `argument.entity.notfound.player`, …), the 1.12 lang file, and
 * Spigot's default `unknown-command` message.
 */
const MINECRAFT_FAILURE_PATTERNS: readonly RegExp[] = [
  /^Unknown or incomplete command/im, // command.unknown.command
  /^Unknown command\b/im, // Spigot, and 1.12 commands.generic.notFound
  /^Incorrect argument for command/im, // command.unknown.argument
  /^Could not parse command/im, // command.exception
  /^An unexpected error occurred trying to execute that command/im, // command.failed (1.13–1.19)
  /^An unexpected error occurred while trying to execute that command/im, // command.failed (1.20+)
  /^No player was found/im, // argument.entity.notfound.player
  /^No entity was found/im, // argument.entity.notfound.entity
  /^That player does not exist/im, // argument.player.unknown
  /^That player cannot be found/im, // 1.12 commands.generic.player.notFound
  /^Unknown item '/im, // argument.item.id.invalid
  /^Unknown (?:block type|enchantment|effect|function|ID|entity type|slot|selector type|option)\b/im,
  /^Invalid or unknown entity type/im, // argument.entity.options.type.invalid
  /^There is no such item with name/im, // 1.12 commands.give.item.notFound
  /^Can't give more than \d+ of /im, // commands.give.failed.toomanyitems
  /^Unable to summon entity/im, // commands.summon.failed
  /^Only one (?:player|entity) is allowed, but the provided selector allows more than one/im,
  /^Only players may be affected by this command/im, // argument.player.entities
  /^Expected (?:whitespace to end one argument|integer|float|double|long|boolean|value|end of options|quote)/im,
  /^Invalid (?:integer|float|double|long|boolean) '/im, // parsing.int.invalid and friends
  /^(?:Integer|Float) must not be (?:less|more) than/im, // argument.integer.low / .big
  /^Usage: \//im, // 1.12 commands.generic.usage
];

/**
 * Root commands a store never needs and that would hand the server over or stop it:
 * op/deop (full control of the server), stop/restart/reload/rl (takes every player off or
 * reloads every plugin), "whitelist off" (opens a private server to anyone), ban-ip (locks out
 * an address, an owner's included), save-off (silently stops saving the world), "kill @e"
 * (wipes every entity, players and their items included), transfer (sends players to another
 * server's address). Owners who really sell one of these set commandPolicy.defaultDeny to false
 * and list their own deny rules.
 *
 * Commands that run another command are read, not denied (command-roots.ts): `execute … run`,
 * `return run`, the 1.12 `execute <entity> <x> <y> <z> <command>`, Essentials' `sudo`. The one
 * vanilla way left to run a command from an argument is a command block: it runs the text of
 * its `Command` NBT tag, which setblock, fill, summon (command_block_minecart), give and
 * `data merge` write as `Command:"…"` and `data modify` addresses as the path `Command`
 * (minecraft.wiki Command Block, "Block data"). It only works with enable-command-block=true,
 * but a store never writes one, so the tag is refused wherever it appears. NBT keys are case
 * sensitive, so a player named Command (`give Command diamond 1`) still passes.
 */
const MINECRAFT_DEFAULT_DENY: readonly string[] = [
  'op',
  'deop',
  'stop',
  'restart',
  'reload',
  'rl',
  'whitelist off',
  'ban-ip',
  'save-off',
  'kill @e',
  'transfer',
  '/\\bCommand["\']?(?:\\s*:|\\s+(?:set|merge|append|prepend|insert)\\b)/',
];

export function createMinecraftGame(): Game {
  let chosen: string | undefined;
  return {
    name: 'minecraft',
    rconPassword: 'Minecraft: rcon.password in server.properties',
    identifier: 'player name (Java account name, from `list uuids` when the server supports it)',
    splitsOnSemicolon: false,
    failurePatterns: MINECRAFT_FAILURE_PATTERNS,
    defaultDeny: MINECRAFT_DEFAULT_DENY,
    async readPlayers(query) {
      if (chosen !== undefined) {
        const command = chosen;
        const answer = await query(command);
        const names = parseMinecraftList(answer);
        if (names) return names;
        // The server changed under us (a plugin added or removed): probe again next time.
        chosen = undefined;
        throw unexpectedAnswer('minecraft', command, '"There are N of a max of M players online: …"', answer);
      }
      let last = { command: '', answer: '' };
      for (const command of MINECRAFT_LIST_COMMANDS) {
        const answer = await query(command);
        const names = parseMinecraftList(answer);
        if (names) {
          chosen = command;
          return names;
        }
        last = { command, answer };
      }
      throw unexpectedAnswer('minecraft', last.command, '"There are N of a max of M players online: …"', last.answer);
    },
  };
}

export const minecraftRecord = defineGame({
  id: 'minecraft',
  docsTitle: 'Minecraft',
  console: { transport: 'rcon', port: 25575, title: 'Minecraft' },
  demo: {
    title: 'Minecraft',
    online: 'Steve',
    joiner: 'Alex',
    absent: 'Notch',
    purchases: [
      { command: 'give Steve diamond 64', player: 'Steve', offlineExecute: false },
      { command: 'lp user Steve parent set vip', player: 'Steve', offlineExecute: true },
      { command: 'eco give Steve 1000', player: 'Steve', offlineExecute: true },
      { command: 'give Alex golden_apple 3', player: 'Alex', offlineExecute: false },
      { command: 'give Notch diamond 1', player: 'Notch', offlineExecute: true },
    ],
    thanks: 'say Thanks for supporting the server!',
  },
  forServer: () => createMinecraftGame(),
});
