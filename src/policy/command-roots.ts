/**
 * Where commands start inside one command line, for root-command rules.
 *
 * A rule like "op" must catch every spelling the game runs as `op`: `/op`, `OP`, `minecraft:op`,
 * `bukkit:op`, leading or repeated whitespace, and the same command nested after `run` in a
 * Minecraft `execute … run …` chain (a nickname like `x run op x` in an execute template would
 * otherwise smuggle one in). ARK's `admincheat` / `cheat` prefixes only wrap the real command.
 */

/** Words that only wrap the command that follows them. */
const TRANSPARENT_PREFIXES = new Set(['admincheat', 'cheat']);

/** `/minecraft:OP` → `op`: no leading slashes, no namespace, lower case. */
export function normalizeRoot(token: string): string {
  const bare = token.replace(/^\/+/, '').toLowerCase();
  const colon = bare.lastIndexOf(':');
  return colon >= 0 ? bare.slice(colon + 1) : bare;
}

/** Splits on any whitespace run; the empty command has no tokens. */
export function tokenize(command: string): string[] {
  const trimmed = command.trim();
  return trimmed === '' ? [] : trimmed.split(/\s+/u);
}

/**
 * The token sequences that start at each command position: the first command, and every
 * command an `execute` chain runs. The first token of each sequence is normalised, the rest
 * lowercased, ready to compare with a rule's tokens.
 */
export function commandRoots(command: string): string[][] {
  const tokens = tokenize(command);
  const roots: string[][] = [];
  let i = 0;
  while (i < tokens.length) {
    let start = i;
    while (start < tokens.length - 1 && TRANSPARENT_PREFIXES.has(normalizeRoot(tokens[start]!))) start++;
    roots.push([normalizeRoot(tokens[start]!), ...tokens.slice(start + 1).map((token) => token.toLowerCase())]);
    if (normalizeRoot(tokens[start]!) !== 'execute') break;
    const run = tokens.findIndex((token, j) => j > start && token.toLowerCase() === 'run');
    if (run < 0) break;
    i = run + 1;
  }
  return roots;
}

/** A root rule's tokens, normalised the same way as the command's. */
export function ruleTokens(rule: string): string[] {
  const tokens = tokenize(rule);
  return tokens.map((token, index) => (index === 0 ? normalizeRoot(token) : token.toLowerCase()));
}

/** True when `root` starts with all of `rule`'s tokens (whole tokens: "op" never matches "ops"). */
export function startsWith(root: readonly string[], rule: readonly string[]): boolean {
  return rule.length > 0 && rule.length <= root.length && rule.every((token, index) => root[index] === token);
}
