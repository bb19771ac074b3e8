import { appendLine, splitLines, type Edit } from '../text.js';

/**
 * BattlEye's BEServer_x64.cfg (DayZ, Arma 3): one `Name value` per line, e.g. `RConPassword xyz`,
 * `RConPort 2306`, `RestrictRCon 0`, `RConIP 0.0.0.0`. The names and their meaning are those of
 * the DayZ server files documentation (forums.dayz.com) and CFTools' "BattlEye RCon" page: the
 * password has no spaces or special symbols and at most 32 characters, RestrictRCon defaults to
 * 1, and no RCon port is opened without RConPort. Names compare without case; the value is the
 * next word; a later line overrides an earlier one.
 */
interface BattleyeSetting {
  readonly name: string;
  readonly value: string;
  readonly valueStart: number;
  readonly valueEnd: number;
}

export function parseBattleyeCfg(text: string): BattleyeSetting[] {
  const settings: BattleyeSetting[] = [];
  for (const line of splitLines(text)) {
    const match = /^(\s*)(\S+)(\s*)(\S*)/.exec(line.text);
    if (!match || match[2]!.startsWith('//')) continue;
    const valueStart = line.start + match[1]!.length + match[2]!.length + match[3]!.length;
    settings.push({ name: match[2]!, value: match[4]!, valueStart, valueEnd: valueStart + match[4]!.length });
  }
  return settings;
}

export function lastBattleyeSetting(settings: readonly BattleyeSetting[], name: string): BattleyeSetting | undefined {
  return settings.findLast((setting) => setting.name.toLowerCase() === name.toLowerCase());
}

export function setBattleyeSetting(text: string, settings: readonly BattleyeSetting[], name: string, value: string): Edit {
  const setting = lastBattleyeSetting(settings, name);
  if (!setting) return appendLine(text, `${name} ${value}`);
  const separator = setting.valueStart === setting.valueEnd && !/\s$/.test(text.slice(0, setting.valueStart)) ? ' ' : '';
  return { start: setting.valueStart, end: setting.valueEnd, text: `${separator}${value}` };
}
