/**
 * Where commands may start inside one command line, for root-command rules.
 *
 * A rule like "op" must catch every spelling the game runs as `op`: `/op`, `OP`, `minecraft:op`,
 * `bukkit:op`, leading or repeated whitespace, and the same command run by another command.
 * Which token a chain really runs depends on how each of its arguments parses, and an argument
 * may itself be the word `run` (a player or a storage named `run`: `execute as run run op x`),
 * so chains are read conservatively: every place the game *could* start a command counts as a
 * command position. For a deny rule that can only refuse more; for an allow list it means every
 * possible position must be allowed, which also errs on the refusing side.
 *
 * Splitting on any whitespace run only ever cuts the game's own tokens (separated by single
 * spaces) finer, so every token the game reads as `run` is a token here too.
 */

/** Words that only wrap the command that follows them (ARK's cheat prefixes). */
const TRANSPARENT_PREFIXES = new Set(['admincheat', 'cheat']);

/**
 * Commands whose own `run` sub-command runs another command: `execute … run <command>` and, since
 * Java 1.20.3, `return run <command>` (minecraft.wiki Commands/execute, Commands/return). Every
 * `run` token after one of them starts a possible command; nested chains are covered by the same
 * scan, as their `run` tokens come later in the line.
 */
const RUN_CHAINS = new Set(['execute', 'return']);

/**
 * EssentialsX `sudo <player> <command…>` (alias `esudo`; Essentials plugin.yml, Commandsudo.java)
 * runs the rest of the line as that player, who may be an operator. `c:<text>` makes the player
 * chat instead, and chat text starting with "/" is a command too: normalizeRoot reads `c:/op` as
 * `op`. A store may well deliver `sudo <player> kit vip`, so sudo is read, not denied.
 */
const COMMAND_AFTER_PLAYER = new Set(['sudo', 'esudo']);

/**
 * Java 1.12 and older: `execute <entity> <x> <y> <z> <command…>` and
 * `execute <entity> <x> <y> <z> detect <x> <y> <z> <block> <data> <command…>`, no `run` keyword;
 * the command runs "with originating permissions", the console's (minecraft.wiki Commands/execute/Before).
 * Old 1.8–1.12 servers are common, so a line whose arguments 2–4 are coordinates is read that way
 * too, unless the token in command position is one of today's sub-commands that no game command
 * is named after: then it is the modern syntax (`execute positioned 1 2 3 run …`), whose commands
 * the `run` scan finds. `summon` is both, so it stays a possible command there.
 */
const OLD_EXECUTE_COORDINATE = /^(?:[~^]|[~^]?[-+]?(?:\d+(?:\.\d*)?|\.\d+))$/;
const MODERN_EXECUTE_KEYWORDS = new Set([
  'align',
  'anchored',
  'as',
  'at',
  'facing',
  'if',
  'in',
  'on',
  'positioned',
  'rotated',
  'run',
  'store',
  'unless',
]);

/** `/minecraft:OP` → `op`, `c:/op` → `op`: no slashes around, no namespace, lower case. */
function normalizeRoot(token: string): string {
  const bare = token.replace(/^\/+/, '').toLowerCase();
  const colon = bare.lastIndexOf(':');
  return colon >= 0 ? bare.slice(colon + 1).replace(/^\/+/, '') : bare;
}

/** Splits on any whitespace run; the empty command has no tokens. */
function tokenize(command: string): string[] {
  const trimmed = command.trim();
  return trimmed === '' ? [] : trimmed.split(/\s+/u);
}

/** One place in the line where a command may start. */
export interface CommandRoot {
  /** The command's name there, normalised (`/Minecraft:OP` → `op`). */
  readonly name: string;
  /** True when the command there starts with all of `rule`'s tokens (whole tokens: "op" never matches "ops"). */
  startsWith(rule: readonly string[]): boolean;
}

/**
 * Every position in `command` where the game could start a command, in line order: the first
 * command, every command a chain may run (see above), each once. Linear in the line's length:
 * the positions share one token array, and the `run` tokens are scanned once however deeply
 * chains nest.
 */
export function commandRoots(command: string): CommandRoot[] {
  const lower = tokenize(command).map((token) => token.toLowerCase());
  const names = lower.map(normalizeRoot);
  const starts = new Set<number>();
  const pending = [0];
  let runsScannedFrom = lower.length;

  const visit = (position: number): void => {
    let start = position;
    while (start < lower.length - 1 && TRANSPARENT_PREFIXES.has(names[start]!)) start++;
    if (start >= lower.length || starts.has(start)) return;
    starts.add(start);
    const name = names[start]!;
    if (RUN_CHAINS.has(name)) {
      for (let j = start + 1; j < runsScannedFrom; j++) if (lower[j] === 'run') pending.push(j + 1);
      runsScannedFrom = Math.min(runsScannedFrom, start + 1);
    }
    if (name === 'execute') {
      const old = oldExecuteCommand(lower, start);
      if (old !== undefined) pending.push(old);
    }
    if (COMMAND_AFTER_PLAYER.has(name)) pending.push(start + 2);
  };
  while (pending.length > 0) visit(pending.pop()!);

  return [...starts]
    .sort((a, b) => a - b)
    .map((start) => ({
      name: names[start]!,
      startsWith: (rule) =>
        rule.length > 0 &&
        start + rule.length <= lower.length &&
        rule.every((token, index) => (index === 0 ? names[start] : lower[start + index]) === token),
    }));
}

/** Where a 1.12-style `execute` at `start` runs its command, if the line can be read that way. */
function oldExecuteCommand(lower: readonly string[], start: number): number | undefined {
  const coordinates = (from: number) => [0, 1, 2].every((k) => OLD_EXECUTE_COORDINATE.test(lower[from + k] ?? ''));
  if (!coordinates(start + 2)) return undefined;
  if (lower[start + 5] === 'detect' && coordinates(start + 6)) return start + 11;
  const command = lower[start + 5];
  return command === undefined || MODERN_EXECUTE_KEYWORDS.has(command) ? undefined : start + 5;
}

/** A root rule's tokens, normalised the same way as the command's. */
export function ruleTokens(rule: string): string[] {
  const tokens = tokenize(rule);
  return tokens.map((token, index) => (index === 0 ? normalizeRoot(token) : token.toLowerCase()));
}
