/**
 * A settings file as text whose offsets map back to its bytes, so an edit can change one value and
 * leave every other byte as it was. Every key the parsers look for is ASCII, so a file is read one
 * character per byte (latin1) and only the values porter keeps are decoded as UTF-8. Unreal Engine
 * servers on Windows may write UTF-16LE with a byte order mark; those are read as UTF-16.
 */
export interface SettingsText {
  /** The file's text after any byte order mark. */
  readonly text: string;
  readonly encoding: 'latin1' | 'utf16le';
  readonly bom: Buffer;
}

const UTF8_BOM = Buffer.from([0xef, 0xbb, 0xbf]);
const UTF16LE_BOM = Buffer.from([0xff, 0xfe]);
const strictUtf8 = new TextDecoder('utf-8', { fatal: true });
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

export function decodeSettings(bytes: Uint8Array): SettingsText {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  // An odd length cannot be UTF-16: such a file is read byte by byte like any other.
  if (buffer.subarray(0, 2).equals(UTF16LE_BOM) && buffer.length % 2 === 0) {
    return { text: buffer.subarray(2).toString('utf16le'), encoding: 'utf16le', bom: UTF16LE_BOM };
  }
  const bom = buffer.subarray(0, 3).equals(UTF8_BOM) ? UTF8_BOM : Buffer.alloc(0);
  return { text: buffer.subarray(bom.length).toString('latin1'), encoding: 'latin1', bom };
}

export function encodeSettings(settings: SettingsText, text: string): Buffer {
  return Buffer.concat([settings.bom, Buffer.from(text, settings.encoding)]);
}

/**
 * A value as the game reads it: UTF-8 from a byte-wise file, as is from a UTF-16 one. Undefined
 * when the bytes are not valid text, which no game would accept as a password either.
 */
export function valueText(settings: SettingsText, raw: string): string | undefined {
  if (settings.encoding === 'utf16le') return LONE_SURROGATE.test(raw) ? undefined : raw;
  try {
    return strictUtf8.decode(Buffer.from(raw, 'latin1'));
  } catch {
    return undefined;
  }
}

interface Line {
  /** Offset of the first character. */
  readonly start: number;
  /** Offset just past the last character, before the line break. */
  readonly end: number;
  readonly text: string;
}

export function splitLines(text: string): Line[] {
  const lines: Line[] = [];
  let start = 0;
  while (start <= text.length) {
    const newline = text.indexOf('\n', start);
    const stop = newline < 0 ? text.length : newline;
    const end = stop > start && text[stop - 1] === '\r' ? stop - 1 : stop;
    lines.push({ start, end, text: text.slice(start, end) });
    if (newline < 0) break;
    start = newline + 1;
  }
  return lines;
}

/** The line break the file already uses, so an added line matches its neighbours. */
export function lineBreakOf(text: string): string {
  return text.includes('\r\n') ? '\r\n' : '\n';
}

export interface Edit {
  readonly start: number;
  readonly end: number;
  readonly text: string;
}

export function applyEdit(text: string, edit: Edit): string {
  return text.slice(0, edit.start) + edit.text + text.slice(edit.end);
}

/** An edit adding `line` as a new last line, after a line break if the file lacks a final one. */
export function appendLine(text: string, line: string): Edit {
  const lineBreak = lineBreakOf(text);
  const needsBreak = text.length > 0 && !text.endsWith('\n');
  return { start: text.length, end: text.length, text: `${needsBreak ? lineBreak : ''}${line}${lineBreak}` };
}
