import { appendLine, lineBreakOf, splitLines, type Edit } from '../text.js';

/**
 * `Key=Value` lines, optionally under `[Section]` headers: Unreal Engine's config files (ARK's
 * GameUserSettings.ini, Conan's Game.ini), Project Zomboid's server .ini, Squad's Rcon.cfg and
 * itzg's .rcon-cli.env all share it. Blanks around key and value are dropped; keys compare
 * without case, as Unreal's FName does. A value in double quotes is unquoted (a backslash keeps
 * the next character), which is how Unreal reads quoted config strings. Which of two equal keys
 * counts differs by game, so callers pick the first or the last.
 */
export interface IniEntry {
  /** The section it is under ('' before any header). */
  readonly section: string;
  readonly key: string;
  readonly value: string;
  /** The raw value in the file, quotes included, [start, end). */
  readonly valueStart: number;
  readonly valueEnd: number;
  /** End of the entry's line, before its line break. */
  readonly lineEnd: number;
}

export interface IniFile {
  readonly entries: readonly IniEntry[];
  /** Each section header's line end, by name as written. */
  readonly sections: ReadonlyMap<string, number>;
}

export interface IniSyntax {
  /** Line prefixes that make a comment: ';' for Unreal, '#' for Zomboid, '//' for Squad. */
  readonly comments: readonly string[];
}

export function parseIni(text: string, syntax: IniSyntax): IniFile {
  const entries: IniEntry[] = [];
  const sections = new Map<string, number>();
  let section = '';
  for (const line of splitLines(text)) {
    const trimmed = line.text.trim();
    if (trimmed === '' || syntax.comments.some((prefix) => trimmed.startsWith(prefix))) continue;
    if (trimmed.startsWith('[') && trimmed.endsWith(']')) {
      section = trimmed.slice(1, -1).trim();
      if (!sections.has(section)) sections.set(section, line.end);
      continue;
    }
    const equals = line.text.indexOf('=');
    if (equals < 0) continue;
    const key = line.text.slice(0, equals).trim();
    if (key === '') continue;
    const rawStart = line.start + equals + 1;
    const raw = line.text.slice(equals + 1);
    const valueStart = rawStart + (raw.length - raw.trimStart().length);
    const valueEnd = line.start + line.text.trimEnd().length;
    const value = unquote(line.text.slice(valueStart - line.start, valueEnd - line.start));
    entries.push({ section, key, value, valueStart: Math.min(valueStart, valueEnd), valueEnd, lineEnd: line.end });
  }
  return { entries, sections };
}

function unquote(raw: string): string {
  if (raw.length < 2 || !raw.startsWith('"') || !raw.endsWith('"')) return raw;
  return raw.slice(1, -1).replace(/\\(.)/g, '$1');
}

const sameName = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

export function findIni(file: IniFile, section: string | undefined, key: string, pick: 'first' | 'last'): IniEntry | undefined {
  const matches = file.entries.filter((entry) => sameName(entry.key, key) && (section === undefined || sameName(entry.section, section)));
  return pick === 'first' ? matches[0] : matches.at(-1);
}

/**
 * An edit giving `key` the value `value` (letters, digits and words: nothing to quote): in place
 * if the key is there, else as a new line at the end of its section (adding the section at the
 * end of the file if it is missing), or of the file when `section` is undefined.
 */
export function setIni(text: string, file: IniFile, section: string | undefined, key: string, value: string, pick: 'first' | 'last'): Edit {
  const entry = findIni(file, section, key, pick);
  if (entry) return { start: entry.valueStart, end: entry.valueEnd, text: value };
  if (section === undefined) return appendLine(text, `${key}=${value}`);
  const lineBreak = lineBreakOf(text);
  const inSection = file.entries.filter((candidate) => sameName(candidate.section, section));
  const header = [...file.sections].find(([name]) => sameName(name, section));
  const after = inSection.at(-1)?.lineEnd ?? header?.[1];
  if (after === undefined) {
    const separator = text.length === 0 ? '' : text.endsWith('\n') ? lineBreak : lineBreak + lineBreak;
    return { start: text.length, end: text.length, text: `${separator}[${section}]${lineBreak}${key}=${value}${lineBreak}` };
  }
  return { start: after, end: after, text: `${lineBreak}${key}=${value}` };
}
