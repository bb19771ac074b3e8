import type { SimAnswer } from '../rcon-answers.js';
import { offlineUuid } from '../rcon-players.js';
import type { RconWorld } from '../rcon-world.js';

/*
 * Game semantics of a Minecraft Java server as RCON shows them (vanilla 1.20 wording, plus a few
 * common plugins), good enough for porter's tests and `porter demo`. Vanilla's RCON source
 * collects every feedback message into one buffer without separators, hence the run-together
 * "…see below for errorgive Steve<--[HERE]" strings. EssentialsX balances are the world's, by lowercase name.
 */

const UNKNOWN = 'Unknown or incomplete command, see below for error';
const NO_PLAYER = 'No player was found';
const CONTEXT_CHARS = 10;

/** Vanilla's error context: up to 10 characters before the cursor, the rest of the input, then "<--[HERE]". */
function syntaxError(message: string, input: string, cursor: number): string {
  const at = Math.min(input.length, cursor);
  const before = (at > CONTEXT_CHARS ? '...' : '') + input.slice(Math.max(0, at - CONTEXT_CHARS), at);
  return `${message}${before}${input.slice(at)}<--[HERE]`;
}

const incomplete = (input: string) => syntaxError(UNKNOWN, input, input.length);

/** `minecraft:diamond_sword{...}` → "Diamond Sword". */
function itemName(item: string): string {
  const id = item.replace(/[{[].*$/, '').replace(/^[a-z0-9_.-]+:/, '');
  return id
    .split(/[_/]/)
    .filter(Boolean)
    .map((word) => word[0]!.toUpperCase() + word.slice(1))
    .join(' ');
}

type Targets = { ok: true; names: string[] } | { ok: false; error: string };

function targets(world: RconWorld, token: string): Targets {
  if (token.startsWith('@')) {
    const online = world.players.list();
    if (online.length === 0) return { ok: false, error: NO_PLAYER };
    return { ok: true, names: token.startsWith('@a') || token.startsWith('@e') ? online : [online[0]!] };
  }
  const name = world.players.find(token);
  return name ? { ok: true, names: [name] } : { ok: false, error: NO_PLAYER };
}

const toWhom = (names: string[], plural: string) => (names.length === 1 ? names[0]! : `${names.length} ${plural}`);

function money(amount: number): string {
  return `$${amount.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;
}

type Handler = (args: string[], input: string, world: RconWorld) => string;

/** Handlers that need online targets get them resolved first; "No player was found" otherwise. */
function withTargets(position: number, minArgs: number, run: (names: string[], args: string[]) => string): Handler {
  return (args, input, world) => {
    if (args.length < minArgs) return incomplete(input);
    const found = targets(world, args[position]!);
    return found.ok ? run(found.names, args) : found.error;
  };
}

const vanilla: Record<string, Handler> = {
  list(args, input, world) {
    const online = world.players.list();
    if (args.length > 1 || (args[0] !== undefined && args[0] !== 'uuids'))
      return syntaxError('Incorrect argument for command', input, input.length);
    const shown = args[0] === 'uuids' ? online.map((name) => `${name} (${offlineUuid(name)})`) : online;
    return `There are ${online.length} of a max of ${world.maxPlayers} players online: ${shown.join(', ')}`;
  },
  give: withTargets(0, 2, (names, args) => {
    const count = args[2] === undefined ? 1 : Number(args[2]);
    if (!Number.isInteger(count) || count < 1) return `Invalid integer '${args[2]}'`;
    return `Gave ${count} [${itemName(args[1]!)}] to ${toWhom(names, 'players')}`;
  }),
  say: (args, input) => (args.length === 0 ? incomplete(input) : ''),
  tellraw: withTargets(0, 2, () => ''),
  tell: withTargets(0, 2, (names, args) => `You whisper to ${toWhom(names, 'players')}: ${args.slice(1).join(' ')}`),
  effect(args, input, world) {
    if (args[0] === 'clear')
      return withTargets(1, 2, (names) => `Removed every effect from ${toWhom(names, 'targets')}`)(args, input, world);
    if (args[0] !== 'give') return incomplete(input);
    return withTargets(1, 3, (names, a) => `Applied effect ${itemName(a[2]!)} to ${toWhom(names, 'targets')}`)(args, input, world);
  },
  xp(args, input, world) {
    if (args[0] !== 'add' && args[0] !== 'set') return incomplete(input);
    return withTargets(1, 3, (names, a) => {
      const amount = Number(a[2]);
      if (!Number.isInteger(amount)) return `Invalid integer '${a[2]}'`;
      const unit = a[3] === 'levels' ? 'levels' : 'points';
      return a[0] === 'add'
        ? `Gave ${amount} experience ${unit} to ${toWhom(names, 'players')}`
        : `Set ${amount} experience ${unit} on ${toWhom(names, 'players')}`;
    })(args, input, world);
  },
  kick(args, input, world) {
    return withTargets(0, 1, (names, a) => {
      for (const name of names) world.players.leave(name);
      return names.map((name) => `Kicked ${name}: ${a.slice(1).join(' ') || 'Kicked by an operator'}`).join('');
    })(args, input, world);
  },
  kill: withTargets(0, 1, (names) => `Killed ${toWhom(names, 'entities')}`),
  clear: withTargets(0, 1, (names) => `Removed 0 item(s) from player ${toWhom(names, 'players')}`),
  tp: withTargets(0, 2, (names, a) => `Teleported ${toWhom(names, 'entities')} to ${a.slice(1).join(', ')}`),
  gamemode(args, input, world) {
    const mode = args[0];
    if (!mode || !['survival', 'creative', 'adventure', 'spectator'].includes(mode)) return incomplete(input);
    if (args.length < 2) return `Set own game mode to ${itemName(mode)} Mode`;
    return withTargets(1, 2, (names) => names.map((name) => `Set ${name}'s game mode to ${itemName(mode)} Mode`).join(''))(
      args,
      input,
      world,
    );
  },
  enchant: withTargets(0, 2, (names, a) => `Applied enchantment ${itemName(a[1]!)} to ${toWhom(names, 'entities')}'s item`),
  title: withTargets(0, 2, (names) => `Showing new title for ${toWhom(names, 'players')}`),
  op: (args, input) => (args[0] ? `Made ${args[0]} a server operator` : incomplete(input)),
  deop: (args, input) => (args[0] ? `Made ${args[0]} no longer a server operator` : incomplete(input)),
  whitelist: (args, input) => {
    if ((args[0] === 'add' || args[0] === 'remove') && args[1])
      return `${args[0] === 'add' ? 'Added' : 'Removed'} ${args[1]} ${args[0] === 'add' ? 'to' : 'from'} the whitelist`;
    if (args[0] === 'on') return 'Whitelist is now turned on';
    if (args[0] === 'off') return 'Whitelist is now turned off';
    return incomplete(input);
  },
  ban: (args, input) => (args[0] ? `Banned ${args[0]}: ${args.slice(1).join(' ') || 'Banned by an operator.'}` : incomplete(input)),
  pardon: (args, input) => (args[0] ? `Unbanned ${args[0]}` : incomplete(input)),
  summon: (args, input) => (args[0] ? `Summoned new ${itemName(args[0])}` : incomplete(input)),
  time: (args, input) =>
    args[0] === 'set' && args[1]
      ? `Set the time to ${args[1] === 'day' ? 1000 : args[1] === 'night' ? 13000 : args[1]}`
      : incomplete(input),
  weather: (args, input) => (args[0] ? `Set the weather to ${args[0] === 'thunder' ? 'rain & thunder' : args[0]}` : incomplete(input)),
  function: (args, input) => (args[0] ? `Executed 1 command from function '${args[0]}'` : incomplete(input)),
  scoreboard: (args, input, world) => {
    if (args[0] !== 'players' || args[1] !== 'add') return incomplete(input);
    return withTargets(2, 5, (names, a) => `Added ${a[4]} to [${a[3]}] for ${toWhom(names, 'entities')} (now ${a[4]})`)(args, input, world);
  },
  seed: () => 'Seed: [-4172144997902289642]',
  'save-all': () => 'Saving the game (this may take a moment!)Saved the game',
  stop: () => 'Stopping the server',
  help: () => '/give <targets> <item> [<count>]/list [uuids]/say <message>/tellraw <targets> <message>',
};
vanilla.msg = vanilla.tell!;
vanilla.w = vanilla.tell!;
vanilla.experience = vanilla.xp!;
vanilla.teleport = vanilla.tp!;

const lpGroup = (name: string, group: string | undefined) =>
  `[LP] ${name} now inherits permissions from ${group ?? 'default'} in context global.`;

const plugins: Record<string, Handler> = {
  lp(args) {
    const [scope, name, action, verb, value] = args;
    if (scope === 'user' && name && action === 'parent' && (verb === 'add' || verb === 'set')) return lpGroup(name, value);
    if (scope === 'user' && name && action === 'parent' && verb === 'remove')
      return `[LP] ${name} no longer inherits permissions from ${value} in context global.`;
    if (scope === 'user' && name && action === 'permission' && verb === 'set')
      return `[LP] Set ${value} to true for ${name} in context global.`;
    return '[LP] Running LuckPerms v5.4.131.';
  },
  eco(args, input, world) {
    const [action, name, raw] = args;
    const amount = Number(raw);
    if (!action || !name || !Number.isFinite(amount)) return 'Usage: /eco <give|take|set|reset> <player> <amount>';
    const key = name.toLowerCase();
    const before = world.balances.get(key) ?? 0;
    const after = action === 'give' ? before + amount : action === 'take' ? before - amount : action === 'set' ? amount : 0;
    world.balances.set(key, after);
    return action === 'give'
      ? `${money(amount)} has been added to ${name}'s account. New balance: ${money(after)}.`
      : `${name}'s balance was set to ${money(after)}.`;
  },
  crate(args, input) {
    const [action, kind, name, crate, amount] = args;
    if (action === 'key' && kind === 'give' && name && crate) return `You have given ${name} ${amount ?? 1} ${crate} key(s).`;
    return incomplete(input);
  },
  kit: (args, input) => (args[0] && args[1] ? `Gave kit ${args[0]} to ${args[1]}.` : incomplete(input)),
  broadcast: (args) => `[Broadcast] ${args.join(' ')}`,
  points: (args, input) =>
    args[0] === 'give' && args[1] && args[2] ? `Successfully gave ${args[2]} points to ${args[1]}.` : incomplete(input),
  pex: (args) => (args[0] === 'user' && args[1] ? `User ${args[1]} added to group ${args.at(-1)}` : 'PermissionsEx 1.23.4'),
};
plugins.luckperms = plugins.lp!;
plugins.crates = plugins.crate!;
plugins.bc = plugins.broadcast!;
plugins.money = plugins.eco!;

/** Runs one console line as a Minecraft server would over RCON. */
export function runMinecraftCommand(line: string, world: RconWorld): SimAnswer {
  // 1.19+ runs RCON lines through performPrefixedCommand, which drops one leading slash.
  const input = line.startsWith('/') ? line.slice(1) : line;
  const [rawRoot = '', ...args] = input.split(' ').filter((word, index) => index === 0 || word !== '');
  if (rawRoot === 'execute') {
    const run = input.indexOf(' run ');
    return run === -1 ? { text: incomplete(input) } : runMinecraftCommand(input.slice(run + 5), world);
  }
  // Namespaced roots (minecraft:give, essentials:eco) reach the same command.
  const root = rawRoot.includes(':') ? rawRoot.slice(rawRoot.indexOf(':') + 1) : rawRoot;
  const handler = Object.hasOwn(vanilla, root) ? vanilla[root] : Object.hasOwn(plugins, root) ? plugins[root] : undefined;
  if (!handler) return { text: syntaxError(UNKNOWN, input, 0) };
  return { text: handler(args, input, world) };
}
