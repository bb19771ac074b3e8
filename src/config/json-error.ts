/**
 * Finds where a JSON text stops being valid JSON. `JSON.parse`'s own message is not used because
 * V8 quotes a slice of the input in it, and the config file holds secrets; its position format
 * also differs between Node versions. This scanner walks the grammar once and reports the first
 * offending position as a 1-based line and column, describing the problem without echoing text.
 */

interface JsonSyntaxProblem {
  readonly line: number;
  readonly column: number;
  readonly message: string;
}

/** Where and why the scan stopped; thrown from deep in the recursion, caught once in locateJsonError. */
class Stop extends Error {
  constructor(
    readonly offset: number,
    message: string,
  ) {
    super(message);
  }
}

export function locateJsonError(text: string): JsonSyntaxProblem | undefined {
  try {
    const end = skipSpace(text, parseValue(text, skipSpace(text, 0)));
    if (end < text.length) throw new Stop(end, 'unexpected text after the end of the JSON document');
    return undefined;
  } catch (error) {
    // Absurd nesting overflows the stack; the caller then reports the file as invalid without a position.
    if (error instanceof RangeError) return undefined;
    if (!(error instanceof Stop)) throw error;
    return { ...lineAndColumn(text, error.offset), message: error.message };
  }
}

function lineAndColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < offset && i < text.length; i++) {
    if (text[i] === '\n') {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, column: offset - lineStart + 1 };
}

function skipSpace(text: string, at: number): number {
  while (at < text.length && ' \t\n\r'.includes(text[at] as string)) at++;
  return at;
}

/** Describes an unexpected character without quoting letters or digits, which may be part of a secret. */
function unexpected(text: string, at: number, expected: string): Stop {
  if (at >= text.length) return new Stop(at, `unexpected end of file: expected ${expected}`);
  const c = text[at] as string;
  if (c === '/') return new Stop(at, `comments are not allowed in JSON: expected ${expected}`);
  if (c === "'") return new Stop(at, `strings and keys need double quotes ("), not single quotes: expected ${expected}`);
  if (/[\p{L}\p{N}_$]/u.test(c)) return new Stop(at, `unexpected text (strings and keys need double quotes): expected ${expected}`);
  return new Stop(at, `unexpected character ${JSON.stringify(c)}: expected ${expected}`);
}

function parseValue(text: string, at: number): number {
  const c = text[at];
  if (c === '{') return parseObject(text, at);
  if (c === '[') return parseArray(text, at);
  if (c === '"') return parseString(text, at);
  if (c === '-' || (c !== undefined && c >= '0' && c <= '9')) return parseNumber(text, at);
  for (const word of ['true', 'false', 'null']) {
    if (text.startsWith(word, at)) return at + word.length;
  }
  throw unexpected(text, at, 'a value (string, number, object, array, true, false or null)');
}

function parseObject(text: string, at: number): number {
  at = skipSpace(text, at + 1);
  if (text[at] === '}') return at + 1;
  for (;;) {
    if (text[at] !== '"') {
      throw text[at] === '}'
        ? new Stop(at, 'trailing comma before "}" is not allowed in JSON')
        : unexpected(text, at, 'a property name in double quotes');
    }
    at = skipSpace(text, parseString(text, at));
    if (text[at] !== ':') throw unexpected(text, at, '":" after the property name');
    at = skipSpace(text, parseValue(text, skipSpace(text, at + 1)));
    if (text[at] === '}') return at + 1;
    if (text[at] !== ',') throw unexpected(text, at, '"," or "}" after the property value');
    at = skipSpace(text, at + 1);
  }
}

function parseArray(text: string, at: number): number {
  at = skipSpace(text, at + 1);
  if (text[at] === ']') return at + 1;
  for (;;) {
    if (text[at] === ']') throw new Stop(at, 'trailing comma before "]" is not allowed in JSON');
    at = skipSpace(text, parseValue(text, at));
    if (text[at] === ']') return at + 1;
    if (text[at] !== ',') throw unexpected(text, at, '"," or "]" after the array element');
    at = skipSpace(text, at + 1);
  }
}

function parseString(text: string, at: number): number {
  const start = at;
  at++;
  for (;;) {
    if (at >= text.length) throw new Stop(start, 'string is never closed (missing ")');
    const c = text.charCodeAt(at);
    if (c === 0x22) return at + 1;
    if (c < 0x20) {
      throw new Stop(
        at,
        c === 0x0a
          ? 'line break inside a string (missing " at the end of the line?)'
          : 'control character inside a string: write it as an escape such as \\t',
      );
    }
    if (c === 0x5c) {
      const next = text[at + 1];
      if (next === 'u') {
        if (!/^[0-9a-fA-F]{4}$/.test(text.slice(at + 2, at + 6))) throw new Stop(at, 'invalid \\u escape: expected four hex digits');
        at += 6;
        continue;
      }
      if (next === undefined || !'"\\/bfnrt'.includes(next))
        throw new Stop(at, 'invalid escape sequence in a string (a backslash must be written as \\\\)');
      at += 2;
      continue;
    }
    at++;
  }
}

function parseNumber(text: string, at: number): number {
  const number = /-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/y;
  number.lastIndex = at;
  const match = number.exec(text);
  if (!match) throw new Stop(at, 'invalid number');
  const end = at + match[0].length;
  const next = text[end];
  if (next !== undefined && /[0-9.eE]/.test(next)) throw new Stop(at, 'invalid number (no leading zeros, a digit is needed after ".")');
  return end;
}
