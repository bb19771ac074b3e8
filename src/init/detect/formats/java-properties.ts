import { appendLine, type Edit } from '../text.js';

/**
 * Minecraft's server.properties, read as java.util.Properties.load(Reader) reads it (its Javadoc):
 * `#` or `!` starts a comment line; a line ending in an odd number of backslashes continues on the
 * next (whose leading blanks are dropped); the key ends at the first unescaped `=`, `:` or blank;
 * one `=` or `:` between blanks separates it from the value; `\t \n \r \f \uXXXX` are escapes and
 * a backslash before any other character stands for that character. The server writes the file
 * with Properties.store, which escapes `= : # !` (hence `level-type=minecraft\:normal` in every
 * file a 1.20 server writes, e.g. the one quoted in test/fixtures/game-dirs/README.md). A later
 * duplicate key wins, as Properties keeps the last one put. Lone CR line breaks are not handled.
 */
export interface PropertyEntry {
  readonly key: string;
  readonly value: string;
  /** The value's raw text in the file, [start, end), continuation lines included. */
  readonly valueStart: number;
  readonly valueEnd: number;
}

const BLANK = new Set([' ', '\t', '\f']);

interface Segment {
  readonly logical: number;
  readonly file: number;
}

export function parseProperties(text: string): PropertyEntry[] {
  const entries: PropertyEntry[] = [];
  let position = 0;
  while (position < text.length) {
    const logical = readLogicalLine(text, position);
    position = logical.next;
    const entry = parseLogicalLine(logical.text, logical.segments, logical.end);
    if (entry) entries.push(entry);
  }
  return entries;
}

function readLogicalLine(text: string, from: number): { text: string; segments: Segment[]; end: number; next: number } {
  let line = '';
  const segments: Segment[] = [];
  let start = from;
  let first = true;
  for (;;) {
    const newline = text.indexOf('\n', start);
    const stop = newline < 0 ? text.length : newline;
    let end = stop > start && text[stop - 1] === '\r' ? stop - 1 : stop;
    let begin = start;
    if (!first) while (begin < end && BLANK.has(text[begin]!)) begin++;
    const isComment = first && /^[ \t\f]*[#!]/.test(text.slice(begin, end));
    const continues = !isComment && newline >= 0 && endsWithOddBackslashes(text, begin, end);
    if (continues) end--;
    segments.push({ logical: line.length, file: begin });
    line += isComment ? '' : text.slice(begin, end);
    if (!continues) return { text: line, segments, end, next: newline < 0 ? text.length : newline + 1 };
    start = newline + 1;
    first = false;
  }
}

function endsWithOddBackslashes(text: string, begin: number, end: number): boolean {
  let count = 0;
  for (let i = end - 1; i >= begin && text[i] === '\\'; i--) count++;
  return count % 2 === 1;
}

function parseLogicalLine(line: string, segments: readonly Segment[], end: number): PropertyEntry | undefined {
  let i = 0;
  while (i < line.length && BLANK.has(line[i]!)) i++;
  if (i >= line.length) return undefined;
  const keyStart = i;
  while (i < line.length) {
    const c = line[i]!;
    if (c === '\\') i += 2;
    else if (c === '=' || c === ':' || BLANK.has(c)) break;
    else i++;
  }
  const key = unescape(line.slice(keyStart, Math.min(i, line.length)));
  while (i < line.length && BLANK.has(line[i]!)) i++;
  if (line[i] === '=' || line[i] === ':') i++;
  while (i < line.length && BLANK.has(line[i]!)) i++;
  return { key, value: unescape(line.slice(i)), valueStart: fileOffset(segments, i), valueEnd: end };
}

function fileOffset(segments: readonly Segment[], logical: number): number {
  let chosen = segments[0]!;
  for (const segment of segments) if (segment.logical <= logical) chosen = segment;
  return chosen.file + (logical - chosen.logical);
}

const ESCAPES: Readonly<Record<string, string>> = { t: '\t', n: '\n', r: '\r', f: '\f' };

function unescape(raw: string): string {
  let out = '';
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i]!;
    if (c !== '\\' || i === raw.length - 1) {
      out += c;
      continue;
    }
    const next = raw[++i]!;
    const hex = raw.slice(i + 1, i + 5);
    if (next === 'u' && /^[0-9a-fA-F]{4}$/.test(hex)) {
      out += String.fromCharCode(parseInt(hex, 16));
      i += 4;
    } else out += ESCAPES[next] ?? next;
  }
  return out;
}

/** The last entry for `key`, as Properties would keep it. */
export function lastProperty(entries: readonly PropertyEntry[], key: string): PropertyEntry | undefined {
  return entries.findLast((entry) => entry.key === key);
}

/** An edit giving `key` the value `value` (plain ASCII letters, digits and words: nothing to escape). */
export function setProperty(text: string, entries: readonly PropertyEntry[], key: string, value: string): Edit {
  const entry = lastProperty(entries, key);
  return entry ? { start: entry.valueStart, end: entry.valueEnd, text: value } : appendLine(text, `${key}=${value}`);
}
