import { splitLines, type Edit } from '../text.js';

/**
 * PalWorldSettings.ini: under `[/Script/Pal.PalGameWorldSettings]`, one line
 * `OptionSettings=(Difficulty=None,…,AdminPassword="",…,RCONEnabled=False,RCONPort=25575,…)`.
 * Values are bare (`False`, `25575`), double-quoted strings (which may hold commas and
 * parentheses; a backslash keeps the next character, as Unreal's struct text import reads them)
 * or nested lists such as `CrossplayPlatforms=(Steam,Xbox,PS5,Mac)`. The shape is the
 * DefaultPalWorldSettings.ini the server ships (quoted in test/fixtures/game-dirs/README.md); a
 * server writes an empty PalWorldSettings.ini until the owner copies the defaults into it.
 */
interface PalworldOption {
  readonly key: string;
  readonly value: string;
  readonly quoted: boolean;
  /** The raw value in the file, quotes included, [start, end). */
  readonly valueStart: number;
  readonly valueEnd: number;
}

interface PalworldSettings {
  readonly options: readonly PalworldOption[];
  /** Where a new `,Key=Value` goes: the list's closing parenthesis. */
  readonly closeAt: number;
  /** Whether the list already has an option (a new one then needs a comma). */
  readonly hasOptions: boolean;
}

/** The OptionSettings list, or undefined when the file has none (or it is cut short). */
export function parsePalworldSettings(text: string): PalworldSettings | undefined {
  const line = splitLines(text).find((candidate) => /^\s*OptionSettings\s*=\s*\(/i.test(candidate.text));
  if (!line) return undefined;
  const open = line.start + line.text.indexOf('(');
  return parseList(text, open + 1, line.end);
}

function parseList(text: string, from: number, end: number): PalworldSettings | undefined {
  const options: PalworldOption[] = [];
  let i = from;
  while (i < end) {
    while (i < end && /\s/.test(text[i]!)) i++;
    if (text[i] === ')') return { options, closeAt: i, hasOptions: options.length > 0 || text.slice(from, i).trim() !== '' };
    const equals = text.indexOf('=', i);
    if (equals < 0 || equals >= end) return undefined;
    const key = text.slice(i, equals).trim();
    const value = readValue(text, equals + 1, end);
    if (!value) return undefined;
    if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(key)) options.push({ key, ...value.option });
    i = value.next;
    if (text[i] === ',') i++;
  }
  return undefined;
}

function readValue(text: string, start: number, end: number): { option: Omit<PalworldOption, 'key'>; next: number } | undefined {
  let i = start;
  if (text[i] === '"') {
    let value = '';
    for (i++; i < end && text[i] !== '"'; i++) {
      if (text[i] === '\\' && i + 1 < end) i++;
      value += text[i];
    }
    if (i >= end) return undefined;
    return { option: { value, quoted: true, valueStart: start, valueEnd: i + 1 }, next: i + 1 };
  }
  let depth = 0;
  for (; i < end; i++) {
    const c = text[i];
    if (c === '(') depth++;
    else if (c === ')' && depth === 0) break;
    else if (c === ')') depth--;
    else if (c === ',' && depth === 0) break;
    else if (c === '"') {
      const close = text.indexOf('"', i + 1);
      if (close < 0 || close >= end) return undefined;
      i = close;
    }
  }
  if (i >= end) return undefined;
  return { option: { value: text.slice(start, i).trim(), quoted: false, valueStart: start, valueEnd: i }, next: i };
}

export function findPalworldOption(settings: PalworldSettings, key: string): PalworldOption | undefined {
  return settings.options.find((option) => option.key.toLowerCase() === key.toLowerCase());
}

/** An edit setting one option in place, or adding it at the end of the list; `quoted` for strings. */
export function setPalworldOption(settings: PalworldSettings, key: string, value: string, quoted: boolean): Edit {
  const written = quoted ? `"${value}"` : value;
  const option = findPalworldOption(settings, key);
  if (option) return { start: option.valueStart, end: option.valueEnd, text: written };
  const at = settings.closeAt;
  return { start: at, end: at, text: `${settings.hasOptions ? ',' : ''}${key}=${written}` };
}

/** The whole file for a server that has none yet: the section and the options porter needs. */
export function newPalworldSettings(
  options: readonly (readonly [key: string, value: string, quoted: boolean])[],
  lineBreak: string,
): string {
  const list = options.map(([key, value, quoted]) => `${key}=${quoted ? `"${value}"` : value}`).join(',');
  return `[/Script/Pal.PalGameWorldSettings]${lineBreak}OptionSettings=(${list})${lineBreak}`;
}
