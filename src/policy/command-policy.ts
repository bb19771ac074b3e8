import { ConfigError, messageOf } from '../errors.js';
import type { Game } from '../games/game.js';
import { commandRoots, ruleTokens, type CommandRoot } from './command-roots.js';
import { compileRegexRule } from './rule-syntax.js';

export type PolicyVerdict = { ok: true } | { ok: false; reason: string };

export interface CommandPolicy {
  /** Whether `command` may be sent; a refusal's reason names the rule. Never throws. */
  check(command: string): PolicyVerdict;
}

type Rule =
  | { readonly kind: 'regex'; readonly text: string; readonly origin: string; readonly re: RegExp }
  | { readonly kind: 'root'; readonly text: string; readonly origin: string; readonly tokens: readonly string[] };

/**
 * The command policy of one server (docs/design.md#command-safety).
 *
 * Rule forms: a root command (`"op"`, `"whitelist off"`) that matches however the game would
 * run it (see command-roots.ts), or `/regex/flags` tested against the whole command. Deny wins
 * over allow; a root rule denies a command when it matches at any place where the line may start
 * a command. When `allow` is given, a command passes only if a regex rule matches it or every
 * such place (`execute as x run give …` has two; every `run` in an execute or return chain adds
 * one) holds an allowed root. The preset's default deny list applies unless `defaultDeny` is
 * false. Presets whose console splits on ";" refuse it outright, and CR / LF / NUL are always
 * refused, whatever the rules say.
 */
/** The config's `commandPolicy` section. */
interface CommandPolicySettings {
  readonly allow?: readonly string[] | undefined;
  readonly deny?: readonly string[] | undefined;
  readonly defaultDeny?: boolean | undefined;
}

export function compileCommandPolicy(preset: Game, config?: CommandPolicySettings): CommandPolicy {
  const deny = [
    ...(config?.deny ?? []).map((text, i) => compileRule(text, `commandPolicy.deny[${i}]`, 'commandPolicy rule')),
    ...(config?.defaultDeny === false
      ? []
      : preset.defaultDeny.map((text, i) =>
          compileRule(text, `the ${preset.name} preset's default deny list [${i}]`, `the ${preset.name} preset's default deny rule`),
        )),
  ];
  const allow = config?.allow?.map((text, i) => compileRule(text, `commandPolicy.allow[${i}]`, 'commandPolicy.allow rule'));

  return {
    check(command) {
      if (/[\r\n\0]/.test(command)) {
        return refuse('the command contains CR, LF or NUL, which could start a second command');
      }
      if (preset.splitsOnSemicolon && command.includes(';')) {
        return refuse(`the command contains ";", which the ${preset.name} console treats as the start of a second command`);
      }
      const roots = commandRoots(command);
      for (const rule of deny) {
        if (rule.kind === 'regex' ? rule.re.test(command) : roots.some((root) => root.startsWith(rule.tokens))) {
          const hint = rule.origin.startsWith('the ') ? ' (set commandPolicy.defaultDeny to false to allow it)' : '';
          return refuse(`denied by ${rule.origin} "${rule.text}"${hint}`);
        }
      }
      if (allow) {
        const unmatched = notAllowed(command, roots, allow);
        if (unmatched !== undefined) return refuse(`not allowed by commandPolicy.allow: ${unmatched}`);
      }
      return { ok: true };
    },
  };
}

/** Why `command` is outside the allow list, or undefined when an entry allows it. */
function notAllowed(command: string, roots: readonly CommandRoot[], allow: readonly Rule[]): string | undefined {
  if (allow.some((rule) => rule.kind === 'regex' && rule.re.test(command))) return undefined;
  if (roots.length === 0) return 'no entry matches the empty command';
  const rootRules = allow.filter((rule) => rule.kind === 'root');
  const missing = [...new Set(roots.filter((root) => !rootRules.some((rule) => root.startsWith(rule.tokens))).map((root) => root.name))];
  if (missing.length === 0) return undefined;
  const names = missing
    .slice(0, MAX_ROOTS_SHOWN)
    .map((name) => (name.length > MAX_NAME_SHOWN ? `${name.slice(0, MAX_NAME_SHOWN)}…` : name));
  const shown = `"${names.join('", "')}"${missing.length > MAX_ROOTS_SHOWN ? ', …' : ''}`;
  if (roots.length === 1) return `no entry matches the command root ${shown}`;
  return `no entry matches the command root ${shown} at a place where this line may start a command (every command after a "run" in an execute or return chain, or after "sudo <player>", must be allowed too)`;
}

/** A refusal reason stays short even for a line with hundreds of "run" tokens or a huge one. */
const MAX_ROOTS_SHOWN = 5;
const MAX_NAME_SHOWN = 40;

function refuse(reason: string): PolicyVerdict {
  return { ok: false, reason };
}

function compileRule(text: string, where: string, origin: string): Rule {
  let re: RegExp | undefined;
  try {
    re = compileRegexRule(text);
  } catch (error) {
    throw new ConfigError(`${where} "${text}" is not a valid regular expression (${messageOf(error)}); fix it in the config file`);
  }
  if (re) return { kind: 'regex', text, origin, re };
  const tokens = ruleTokens(text);
  if (tokens.length === 0 || tokens[0] === '') {
    throw new ConfigError(`${where} is empty; write a root command such as "op" or a /regular expression/`);
  }
  return { kind: 'root', text, origin, tokens };
}
