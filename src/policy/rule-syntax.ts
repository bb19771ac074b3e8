import { ruleTokens } from './command-roots.js';
import { messageOf } from '../errors.js';

/**
 * The syntax of one commandPolicy rule, shared by the config schema (which refuses a bad rule
 * before anything runs) and command-policy.ts (which compiles the rules): `/regex/flags`, or a
 * root command such as "op" or "whitelist off".
 */
const REGEX_RULE = /^\/(.+)\/([a-z]*)$/s;

/** The RegExp of a `/regex/flags` rule; undefined for a root-command rule. Throws SyntaxError when the regex is invalid. */
export function compileRegexRule(text: string): RegExp | undefined {
  const match = REGEX_RULE.exec(text);
  if (!match) return undefined;
  const [, source, flags] = match as unknown as [string, string, string];
  // g and y make test() stateful across calls; a policy must give the same answer every time.
  return new RegExp(source, flags.replace(/[gy]/g, ''));
}

/** What is wrong with a rule, or undefined when command-policy.ts can compile it. */
export function ruleProblem(text: string): string | undefined {
  try {
    if (compileRegexRule(text)) return undefined;
  } catch (error) {
    return `not a valid regular expression (${messageOf(error)}): fix the /regex/ or write a root command such as "op"`;
  }
  const tokens = ruleTokens(text);
  if (tokens.length === 0 || tokens[0] === '') return 'is empty: write a root command such as "op" or a /regular expression/';
  return undefined;
}
