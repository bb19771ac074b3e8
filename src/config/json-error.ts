import {
  ARRAY_END,
  ARRAY_START,
  COLON,
  COMMA,
  JsonTokenizer,
  OBJECT_END,
  OBJECT_START,
  STRING,
  STRAY,
  type JsonTokenKind,
} from '../json-tokens.js';

/**
 * Finds where a JSON text stops being valid JSON. `JSON.parse`'s own message is not used because
 * V8 quotes a slice of the input in it, and the config file holds secrets; its position format
 * also differs between Node versions. This reader walks the grammar once over the shared tokenizer
 * (src/json-tokens.ts) and reports the first offending position as a 1-based line and column,
 * describing the problem without echoing text.
 */

interface JsonSyntaxProblem {
  readonly line: number;
  readonly column: number;
  readonly message: string;
}

/** Where and why the reading stopped. */
class Stop {
  constructor(
    readonly offset: number,
    readonly message: string,
  ) {}
}

/** What the grammar expects next, and how an error says it. */
const VALUE = 0;
const FIRST_KEY = 1;
const NEXT_KEY = 2;
const AFTER_KEY = 3;
const AFTER_MEMBER = 4;
const FIRST_ELEMENT = 5;
const NEXT_ELEMENT = 6;
const AFTER_ELEMENT = 7;
const DONE = 8;
type Expecting = 0 | 1 | 2 | 3 | 4 | 5 | 6 | 7 | 8;

const A_VALUE = 'a value (string, number, object, array, true, false or null)';
const A_KEY = 'a property name in double quotes';
const EXPECTED = [
  A_VALUE,
  A_KEY,
  A_KEY,
  '":" after the property name',
  '"," or "}" after the property value',
  A_VALUE,
  A_VALUE,
  '"," or "]" after the array element',
  '',
];

const isValueStart = (kind: JsonTokenKind) => kind !== STRAY && (kind >= STRING || kind === OBJECT_START || kind === ARRAY_START);

export function locateJsonError(text: string): JsonSyntaxProblem | undefined {
  /** The objects (true) and arrays (false) open around the next token. */
  const open: boolean[] = [];
  let expecting = VALUE as Expecting;
  let stop: Stop | undefined;
  const afterValue = (): Expecting => (open.length === 0 ? DONE : open.at(-1) ? AFTER_MEMBER : AFTER_ELEMENT);
  const tokens = new JsonTokenizer((kind, start) => {
    if (stop !== undefined) return;
    stop = step(kind, start);
    if (stop === undefined && tokens.problem !== undefined) stop = new Stop(tokens.problemAt, tokens.problem);
  });

  function step(kind: JsonTokenKind, at: number): Stop | undefined {
    switch (expecting) {
      case DONE:
        return new Stop(at, 'unexpected text after the end of the JSON document');
      case AFTER_KEY:
        if (kind !== COLON) return unexpected(text, at, EXPECTED[AFTER_KEY]!);
        expecting = VALUE;
        return undefined;
      case AFTER_MEMBER:
      case AFTER_ELEMENT:
        if (kind === (expecting === AFTER_MEMBER ? OBJECT_END : ARRAY_END)) {
          open.pop();
          expecting = afterValue();
        } else if (kind === COMMA) expecting = expecting === AFTER_MEMBER ? NEXT_KEY : NEXT_ELEMENT;
        else return unexpected(text, at, EXPECTED[expecting]!);
        return undefined;
      case FIRST_KEY:
      case NEXT_KEY:
        if (kind === STRING) expecting = AFTER_KEY;
        else if (kind !== OBJECT_END) return unexpected(text, at, A_KEY);
        else if (expecting === NEXT_KEY) return new Stop(at, 'trailing comma before "}" is not allowed in JSON');
        else {
          open.pop();
          expecting = afterValue();
        }
        return undefined;
      case FIRST_ELEMENT:
      case NEXT_ELEMENT:
        if (kind === ARRAY_END) {
          if (expecting === NEXT_ELEMENT) return new Stop(at, 'trailing comma before "]" is not allowed in JSON');
          open.pop();
          expecting = afterValue();
          return undefined;
        }
        break;
    }
    if (!isValueStart(kind)) return unexpected(text, at, A_VALUE);
    if (kind === OBJECT_START || kind === ARRAY_START) {
      open.push(kind === OBJECT_START);
      expecting = kind === OBJECT_START ? FIRST_KEY : FIRST_ELEMENT;
    } else expecting = afterValue();
    return undefined;
  }

  tokens.write(text);
  tokens.end();
  if (stop === undefined && expecting !== DONE) stop = unexpected(text, text.length, EXPECTED[expecting]!);
  return stop === undefined ? undefined : { ...lineAndColumn(text, stop.offset), message: stop.message };
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

/** Describes an unexpected character without quoting letters or digits, which may be part of a secret. */
function unexpected(text: string, at: number, expected: string): Stop {
  if (at >= text.length) return new Stop(at, `unexpected end of file: expected ${expected}`);
  const c = text[at] as string;
  if (c === '/') return new Stop(at, `comments are not allowed in JSON: expected ${expected}`);
  if (c === "'") return new Stop(at, `strings and keys need double quotes ("), not single quotes: expected ${expected}`);
  if (/[\p{L}\p{N}_$]/u.test(c)) return new Stop(at, `unexpected text (strings and keys need double quotes): expected ${expected}`);
  return new Stop(at, `unexpected character ${JSON.stringify(c)}: expected ${expected}`);
}
