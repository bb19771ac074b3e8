/**
 * The one tokenizer of JSON text for porter's readers that JSON.parse cannot serve: the position of
 * a syntax error in the configuration (config/json-error.ts, which must not quote the text: it
 * holds secrets), the exact digits of a pull answer's int64 id (api/wire/int64-json.ts) and the id
 * of a pull answer too big to keep, read as it streams past (api/wire/pull-scan.ts).
 *
 * It is pushed code units, any number at a time: a string's UTF-16 units or UTF-8 bytes (every
 * unit JSON's grammar names is ASCII, and no byte of a multi-byte UTF-8 character is), and keeps
 * no token's text, so memory stays the same however long a token is. Offsets count the units
 * pushed. It reads tokens only; the grammar (what may follow what) is each reader's.
 *
 * Not Microsoft's jsonc-parser, whose scanner (createScanner) yields token offsets and raw text as
 * wanted but only over one whole string: an oversized pull answer is never held whole, and the
 * config reader would also have to refuse the comments and trailing commas it accepts.
 */

export const OBJECT_START = 1;
export const OBJECT_END = 2;
export const ARRAY_START = 3;
export const ARRAY_END = 4;
export const COLON = 5;
export const COMMA = 6;
export const STRING = 7;
export const NUMBER = 8;
/** `true`, `false` or `null`. */
export const LITERAL = 9;
/** One unit that starts no token (a letter, a quote, a slash…), or the first of a word that is not a literal. */
export const STRAY = 10;

export type JsonTokenKind = 1 | 2 | 3 | 4 | 5 | 6 | 7 | 8 | 9 | 10;

/** Receives each token, `end` exclusive; the tokenizer's `problem` says what makes it invalid, if anything. */
type JsonTokenSink = (kind: JsonTokenKind, start: number, end: number) => void;

const BETWEEN = 0;
const IN_STRING = 1;
const ESCAPE = 2;
const UNICODE = 3;
const WORD = 4;
// A number: after '-', after a leading 0, in the integer digits, after '.', in the fraction,
// after 'e', after the exponent's sign, in the exponent; and past a fault, taking what a number would.
const MINUS = 5;
const ZERO = 6;
const INTEGER = 7;
const DOT = 8;
const FRACTION = 9;
const E = 10;
const E_SIGN = 11;
const EXPONENT = 12;
const BAD_NUMBER = 13;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

const isDigit = (c: number) => c >= 0x30 && c <= 0x39;
const isHex = (c: number) => isDigit(c) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);
/** What a number's text may not be followed by: another digit, '.', 'e' or 'E'. */
const continuesNumber = (c: number) => isDigit(c) || c === 0x2e || c === 0x65 || c === 0x45;
/** What a faulty number's text is taken to run through (signs too), as a lenient reader would see it. */
const inBadNumber = (c: number) => continuesNumber(c) || c === 0x2b || c === 0x2d;
/** ", \, /, b, f, n, r, t: the escapes JSON has besides \u. */
const isSimpleEscape = (c: number) =>
  c === QUOTE || c === BACKSLASH || c === 0x2f || c === 0x62 || c === 0x66 || c === 0x6e || c === 0x72 || c === 0x74;

const WORDS = ['true', 'false', 'null'];

/** What ends a run of plain text in a string: its closing quote, an escape, a control character (below a space). */
const STRING_STOP = /["\\]|[^ -\uffff]/g;

/** Where a run of plain text in a string ends: a regular expression leaps over it faster than a loop. */
function plainTextEnd(text: string, from: number): number {
  STRING_STOP.lastIndex = from;
  return STRING_STOP.exec(text)?.index ?? text.length;
}

const NUMBER_PROBLEM = 'invalid number';
const NUMBER_FORM_PROBLEM = 'invalid number (no leading zeros, a digit is needed after ".")';

export class JsonTokenizer {
  readonly #sink: JsonTokenSink;
  /** While a token is delivered: what makes it invalid (the first fault in it), else undefined. */
  problem: string | undefined;
  /** Where `problem` is. */
  problemAt = 0;
  #state = BETWEEN;
  #offset = 0;
  #start = 0;
  #escapeAt = 0;
  #hexLeft = 0;
  #word = '';
  #wordAt = 0;

  constructor(sink: JsonTokenSink) {
    this.#sink = sink;
  }

  write(units: string | Uint8Array): void {
    if (typeof units !== 'string') {
      for (let i = 0; i < units.length; i++) this.#unit(units[i]!);
      return;
    }
    for (let i = 0; i < units.length; i++) {
      if (this.#state === IN_STRING) {
        // Most of a pull answer is its command's text: leap to the next unit a string cares about.
        const stop = plainTextEnd(units, i);
        this.#offset += stop - i;
        i = stop;
        if (i === units.length) return;
      }
      this.#unit(units.charCodeAt(i));
    }
  }

  /** The text ended: a token it cut short is delivered, with what is wrong with it. */
  end(): void {
    const at = this.#offset;
    switch (this.#state) {
      case IN_STRING:
        this.#note(this.#start, 'string is never closed (missing ")');
        break;
      case ESCAPE:
        this.#note(this.#escapeAt, 'invalid escape sequence in a string (a backslash must be written as \\\\)');
        break;
      case UNICODE:
        this.#note(this.#escapeAt, 'invalid \\u escape: expected four hex digits');
        break;
      case WORD:
        this.#state = BETWEEN;
        this.#emit(STRAY, this.#start, this.#start + 1);
        return;
      case MINUS:
        this.#note(this.#start, NUMBER_PROBLEM);
        break;
      case DOT:
      case E:
      case E_SIGN:
        this.#note(this.#start, NUMBER_FORM_PROBLEM);
        break;
      case BETWEEN:
        return;
    }
    const kind = this.#state <= UNICODE ? STRING : NUMBER;
    this.#state = BETWEEN;
    this.#emit(kind, this.#start, at);
  }

  #note(at: number, problem: string): void {
    if (this.problem !== undefined) return;
    this.problem = problem;
    this.problemAt = at;
  }

  #emit(kind: JsonTokenKind, start: number, end: number): void {
    this.#sink(kind, start, end);
    this.problem = undefined;
  }

  /** A number's text ended before `at`: deliver it, and read the unit at `at` between tokens. */
  #endNumber(at: number): void {
    this.#state = BETWEEN;
    this.#emit(NUMBER, this.#start, at);
  }

  #badNumber(): void {
    this.#note(this.#start, NUMBER_FORM_PROBLEM);
    this.#state = BAD_NUMBER;
  }

  #unit(c: number): void {
    const at = this.#offset++;
    const state = this.#state;
    if (state === BETWEEN) return this.#between(c, at);
    if (state <= UNICODE) return this.#inString(c, at);
    if (state === WORD) {
      if (c === this.#word.charCodeAt(this.#wordAt)) {
        if (++this.#wordAt === this.#word.length) {
          this.#state = BETWEEN;
          this.#emit(LITERAL, this.#start, at + 1);
        }
        return;
      }
      this.#state = BETWEEN;
      this.#emit(STRAY, this.#start, this.#start + 1);
    } else if (!this.#inNumber(c, at)) return;
    this.#between(c, at);
  }

  #inString(c: number, at: number): void {
    switch (this.#state) {
      case IN_STRING:
        if (c === QUOTE) {
          this.#state = BETWEEN;
          this.#emit(STRING, this.#start, at + 1);
        } else if (c === BACKSLASH) {
          this.#escapeAt = at;
          this.#state = ESCAPE;
        } else if (c < 0x20) {
          this.#note(
            at,
            c === 0x0a
              ? 'line break inside a string (missing " at the end of the line?)'
              : 'control character inside a string: write it as an escape such as \\t',
          );
        }
        return;
      case ESCAPE:
        if (c === 0x75) {
          this.#hexLeft = 4;
          this.#state = UNICODE;
          return;
        }
        if (!isSimpleEscape(c)) this.#note(this.#escapeAt, 'invalid escape sequence in a string (a backslash must be written as \\\\)');
        this.#state = IN_STRING;
        return;
      case UNICODE:
        if (isHex(c)) {
          if (--this.#hexLeft === 0) this.#state = IN_STRING;
          return;
        }
        this.#note(this.#escapeAt, 'invalid \\u escape: expected four hex digits');
        this.#state = IN_STRING;
        this.#inString(c, at);
        return;
    }
  }

  /** Reads `c` in a number; true when the number ended before it, and `c` is read between tokens. */
  #inNumber(c: number, at: number): boolean {
    const state = this.#state;
    if (isDigit(c)) {
      if (state === MINUS) this.#state = c === 0x30 ? ZERO : INTEGER;
      else if (state === ZERO) this.#badNumber();
      else if (state === DOT) this.#state = FRACTION;
      else if (state === E || state === E_SIGN) this.#state = EXPONENT;
      return false;
    }
    const e = c === 0x65 || c === 0x45;
    if (state === BAD_NUMBER && inBadNumber(c)) return false;
    if ((state === ZERO || state === INTEGER) && (c === 0x2e || e)) {
      this.#state = e ? E : DOT;
      return false;
    }
    if (state === FRACTION && e) {
      this.#state = E;
      return false;
    }
    if (state === E && (c === 0x2b || c === 0x2d)) {
      this.#state = E_SIGN;
      return false;
    }
    if (state === MINUS) this.#note(this.#start, NUMBER_PROBLEM);
    else if (state === DOT || state === E || state === E_SIGN || ((state === FRACTION || state === EXPONENT) && continuesNumber(c))) {
      // What a number's text may not end in, or be followed by: the whole number is at fault.
      if (inBadNumber(c)) {
        this.#badNumber();
        return false;
      }
      this.#note(this.#start, NUMBER_FORM_PROBLEM);
    }
    this.#endNumber(at);
    return true;
  }

  #between(c: number, at: number): void {
    switch (c) {
      case 0x20:
      case 0x09:
      case 0x0a:
      case 0x0d:
        return;
      case 0x7b:
        return this.#emit(OBJECT_START, at, at + 1);
      case 0x7d:
        return this.#emit(OBJECT_END, at, at + 1);
      case 0x5b:
        return this.#emit(ARRAY_START, at, at + 1);
      case 0x5d:
        return this.#emit(ARRAY_END, at, at + 1);
      case 0x3a:
        return this.#emit(COLON, at, at + 1);
      case 0x2c:
        return this.#emit(COMMA, at, at + 1);
      case QUOTE:
        this.#start = at;
        this.#state = IN_STRING;
        return;
      case 0x2d:
        this.#start = at;
        this.#state = MINUS;
        return;
      case 0x74: // t
      case 0x66: // f
      case 0x6e: // n
        this.#start = at;
        this.#word = WORDS[c === 0x74 ? 0 : c === 0x66 ? 1 : 2]!;
        this.#wordAt = 1;
        this.#state = WORD;
        return;
    }
    if (isDigit(c)) {
      this.#start = at;
      this.#state = c === 0x30 ? ZERO : INTEGER;
      return;
    }
    this.#emit(STRAY, at, at + 1);
  }
}
