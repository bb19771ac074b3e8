import type { ServerConfig } from '../config/schema.js';
import { ConfigError } from '../errors.js';
import type { GamePreset } from '../players/preset.js';
import { commandRoots, ruleTokens, startsWith } from './command-roots.js';

export type PolicyVerdict = { ok: true } | { ok: false; reason: string };

export interface CommandPolicy {
  /** Whether `command` may be sent; a refusal's reason names the rule. Never throws. */
  check(command: string): PolicyVerdict;
}

type Rule =
  | { readonly kind: 'regex'; readonly text: string; readonly origin: string; readonly re: RegExp }
  | { readonly kind: 'root'; readonly text: string; readonly origin: string; readonly tokens: readonly string[] };

/**
 * The command policy of one server (DESIGN §3, issue 3 item 4).
 *
 * Rule forms: a root command (`"op"`, `"whitelist off"`) that matches however the game would
 * run it (see command-roots.ts), or `/regex/flags` tested against the whole command. Deny wins
 * over allow; when `allow` is given, a command passes only if a regex rule matches it or every
 * command position in it (an `execute … run X` chain has two) is an allowed root. The preset's
 * default deny list applies unless `defaultDeny` is false. Presets whose console splits on ";"
 * refuse it outright, and CR / LF / NUL are always refused, whatever the rules say.
 */
export function compileCommandPolicy(preset: GamePreset, config?: ServerConfig['commandPolicy']): CommandPolicy {
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
        if (rule.kind === 'regex' ? rule.re.test(command) : roots.some((root) => startsWith(root, rule.tokens))) {
          const hint = rule.origin.startsWith('the ') ? ' (set commandPolicy.defaultDeny to false to allow it)' : '';
          return refuse(`denied by ${rule.origin} "${rule.text}"${hint}`);
        }
      }
      if (allow && !isAllowed(command, roots, allow)) {
        const shown = roots.map((root) => root[0]).join('", "');
        return refuse(`not allowed by commandPolicy.allow: no entry matches the command (root "${shown}")`);
      }
      return { ok: true };
    },
  };
}

function isAllowed(command: string, roots: readonly string[][], allow: readonly Rule[]): boolean {
  if (allow.some((rule) => rule.kind === 'regex' && rule.re.test(command))) return true;
  const rootRules = allow.filter((rule) => rule.kind === 'root');
  return roots.length > 0 && roots.every((root) => rootRules.some((rule) => startsWith(root, rule.tokens)));
}

function refuse(reason: string): PolicyVerdict {
  return { ok: false, reason };
}

const REGEX_RULE = /^\/(.+)\/([a-z]*)$/s;

function compileRule(text: string, where: string, origin: string): Rule {
  const regex = REGEX_RULE.exec(text);
  if (regex) {
    const [, source, flags] = regex as unknown as [string, string, string];
    let re: RegExp;
    try {
      // g and y make test() stateful across calls; a policy must give the same answer every time.
      re = new RegExp(source, flags.replace(/[gy]/g, ''));
    } catch (error) {
      throw new ConfigError(`${where} "${text}" is not a valid regular expression (${(error as Error).message}); fix it in the config file`);
    }
    return { kind: 'regex', text, origin, re };
  }
  const tokens = ruleTokens(text);
  if (tokens.length === 0 || tokens[0] === '') {
    throw new ConfigError(`${where} is empty; write a root command such as "op" or a /regular expression/`);
  }
  return { kind: 'root', text, origin, tokens };
}
