import { ConfigError, messageOf } from '../errors.js';
import type { Game } from '../games/game.js';
import { excerpt, stripColourCodes } from '../games/text.js';

/** The reason sent with a fail report is the game's answer, cut to this many characters. */
export const MAX_FAILURE_REASON = 500;

/**
 * The patterns that mark a game answer as a failed delivery: the preset's, plus the config's
 * (`failurePatterns: [...]` adds, `{ mode: "replace", patterns }` replaces). Config patterns
 * are case-insensitive and multi-line (`^` and `$` match at every line of the answer).
 */
/** The config's `failurePatterns`: patterns added to the game's, or replacing them. */
type FailurePatternSettings = readonly string[] | { readonly mode: 'add' | 'replace'; readonly patterns: readonly string[] };

export function compileFailurePatterns(preset: Game, config?: FailurePatternSettings): RegExp[] {
  if (config === undefined) return [...preset.failurePatterns];
  const { mode, patterns } = 'patterns' in config ? config : { mode: 'add' as const, patterns: config };
  const own = patterns.map((source, index) => {
    try {
      return new RegExp(source, 'im');
    } catch (error) {
      throw new ConfigError(
        `failurePatterns entry ${index} ("${source}") is not a valid regular expression (${messageOf(error)}); fix it in the config file`,
      );
    }
  });
  return mode === 'replace' ? own : [...preset.failurePatterns, ...own];
}

/**
 * The game's answer (colour codes removed, whitespace folded, at most 500 characters) when it
 * matches a failure pattern; null when the answer means the command ran. Patterns see each line
 * without its leading spaces, so an indented error still counts as a line start.
 */
export function failureIn(answer: string, patterns: readonly RegExp[]): string | null {
  // Indentation is not part of the message: "^No player was found" must match "  No player was found".
  const text = stripColourCodes(answer).replace(/^[ \t]+/gm, '');
  for (const pattern of patterns) {
    pattern.lastIndex = 0;
    if (pattern.test(text)) return excerpt(text, MAX_FAILURE_REASON) || '(empty answer)';
  }
  return null;
}
