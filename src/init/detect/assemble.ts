import { transportOf } from '../../protocols/transport-registry.js';
import { Secret } from './secret.js';
import { DEFAULT, type Fact, type GameSettings } from './settings.js';
import type { Detection, FoundSetting, Problem } from './types.js';

const LOOPBACK = '127.0.0.1';

/** The detection the settings amount to: the executor, the lines to show, and what stands in the way. */
export function assemble(settings: GameSettings, process?: { pid: number; name: string }): Detection {
  const password = settings.password?.value ? new Secret(settings.password.value) : undefined;
  return {
    game: settings.game,
    executor: { type: settings.executor, host: settings.host?.value ?? LOOPBACK, port: settings.port.value },
    password,
    found: foundLines(settings, password),
    problems: [...sharedProblems(settings), ...settings.problems],
    settingsFile: settings.file,
    process,
  };
}

function line(fact: Fact<unknown>, shown: string): FoundSetting {
  return { setting: fact.setting, shown, source: fact.source };
}

function foundLines(settings: GameSettings, password: Secret | undefined): FoundSetting[] {
  const lines: FoundSetting[] = [];
  if (settings.enabled) lines.push(line(settings.enabled, String(settings.enabled.value)));
  lines.push(line(settings.port, String(settings.port.value)));
  if (settings.password) lines.push(line(settings.password, password ? password.describe() : 'empty'));
  if (settings.host) lines.push(line(settings.host, settings.host.value));
  return lines;
}

function sharedProblems(settings: GameSettings): Problem[] {
  const problems: Problem[] = [];
  const console = transportOf(settings.executor).console.name;
  // A file edit helps only with what the file (or a default) decides, not with a command line.
  const fixFor = (fact: Fact<unknown> | undefined) =>
    settings.fix && (!fact || fact.source === DEFAULT || fact.source === settings.fix.shownFile) ? settings.fix : undefined;
  const enabled = settings.enabled;
  if (enabled && !enabled.value) {
    const fix = fixFor(enabled);
    const what =
      enabled.source === DEFAULT
        ? `${enabled.setting} is not set, and it is off by default`
        : `${enabled.setting} is off in ${enabled.source}`;
    const advice = fix ? `Let porter switch it on in ${fix.shownFile}` : `Switch it on in ${enabled.source}`;
    problems.push({
      code: 'rcon-disabled',
      severity: 'error',
      message: `${what}: the game server does not open ${console}. ${advice}, then restart the game server.`,
      fix,
    });
  }
  const password = settings.password;
  if (settings.passwordRequired && !password?.value) {
    const fix = fixFor(password);
    const what = password ? `${password.setting} is empty in ${password.source}` : 'no password is set';
    const advice = fix ? `Let porter set a new one in ${fix.shownFile}` : `Set one${password ? ` in ${password.source}` : ''}`;
    problems.push({
      code: password ? 'password-empty' : 'password-missing',
      severity: 'error',
      message: `${what}: without one the game server keeps ${console} closed. ${advice}, then restart the game server.`,
      fix,
    });
  }
  return problems;
}
