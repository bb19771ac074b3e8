import type { PullResult } from '../types.js';
import { messageOf } from '../../errors.js';
import { ARRAY_END, ARRAY_START, COLON, JsonTokenizer, OBJECT_END, OBJECT_START, STRING } from '../../json-tokens.js';

/**
 * Reading a pull answer without losing the command id. `JSON.parse` turns every number into a
 * double, so an int64 id above 2^53 comes back with different digits and the report would name
 * another command. The body is therefore read twice: `JSON.parse` validates it and gives the
 * `command`, and the tokenizer (src/json-tokens.ts) over the raw text returns the top-level `id`
 * literal verbatim.
 */

/** The raw text of the top-level `id` member's value, or undefined when there is none. */
export type IdLiteral =
  | { readonly kind: 'number'; readonly text: string }
  | { readonly kind: 'string'; readonly value: string }
  | { readonly kind: 'other'; readonly text: string };

/** The id's raw text as a literal: a string's value, a number's digits as written, else the text. */
export function idLiteral(raw: string): IdLiteral {
  if (raw.startsWith('"')) return { kind: 'string', value: JSON.parse(raw) as string };
  return /^-?\d/.test(raw) ? { kind: 'number', text: raw } : { kind: 'other', text: raw };
}

/**
 * Finds the top-level `id` member of a JSON object text. Keys are compared after unescaping
 * (`"\u0069d"` is `id`), `"id"` inside strings or nested objects is skipped, and when a key repeats
 * the last one wins, as with `JSON.parse`. Expects valid JSON (parse it first).
 */
export function readTopLevelId(json: string): IdLiteral | undefined {
  let depth = 0;
  let object = false;
  /** At depth 1: the member's key has been read (and is `id` when `isId`), its value is next. */
  let inValue = false;
  let isId = false;
  let valueStart = 0;
  let found: IdLiteral | undefined;
  const tokens = new JsonTokenizer((kind, start, end) => {
    if (depth === 0) {
      object = kind === OBJECT_START;
      depth = 1;
      return;
    }
    if (!object || depth < 0) return;
    if (depth === 1 && !inValue) {
      if (kind === STRING) {
        const key = json.slice(start, end);
        isId = key === '"id"' || (key.includes('\\') && JSON.parse(key) === 'id');
      } else if (kind === COLON) inValue = true;
      else if (kind === OBJECT_END) depth = -1; // the end: nothing follows in valid JSON
      return;
    }
    if (depth === 1) valueStart = start;
    if (kind === OBJECT_START || kind === ARRAY_START) {
      depth++;
      return;
    }
    if (kind === OBJECT_END || kind === ARRAY_END) depth--;
    if (depth > 1) return;
    inValue = false;
    if (isId) found = idLiteral(json.slice(valueStart, end));
  });
  tokens.write(json);
  return object ? found : undefined;
}

const INT64_MAX = 2n ** 63n - 1n;

/**
 * The id's digits when they name a command id the platform can hand out, else why not. Its ids
 * come from a sequence: a non-negative int64. A negative id is refused like a fraction: run, its
 * report would be refused (400) and retried without end, holding up everything else on the server.
 */
export function int64Digits(literal: IdLiteral): { ok: true; digits: string } | { ok: false; reason: string } {
  const text = literal.kind === 'string' ? literal.value : literal.text;
  const shown = literal.kind === 'string' ? JSON.stringify(literal.value).slice(0, 40) : text.slice(0, 40);
  // Numbers must be plain integer literals: 1.0 or 1e3 are doubles the platform would not send for an int64.
  const pattern = literal.kind === 'string' ? /^-?\d+$/ : /^-?(0|[1-9]\d*)$/;
  if (literal.kind === 'other' || !pattern.test(text)) {
    return { ok: false, reason: `the id ${shown} is not an integer` };
  }
  if (text.startsWith('-')) return { ok: false, reason: `the id ${shown} is negative` };
  if (BigInt(text) > INT64_MAX) {
    return { ok: false, reason: `the id ${shown} is outside the int64 range` };
  }
  return { ok: true, digits: text };
}

/**
 * The rules (docs/design.md#the-api-contract) for a 2xx pull answer that has a body: empty text, `null`, `{}` or an
 * object without `id` (or with `id: null`) mean nothing is due; an integer id (number or digit
 * string) is a claim, with `command` as sent, whatever its type (the loop refuses non-strings and
 * reports them failed). Anything else is `unusable`:
 *
 * - an id that is not an integer: the platform claimed something porter cannot name in a report;
 * - malformed JSON or a JSON value that is not an object: the platform may have claimed a command
 *   but porter cannot know its id. This is the lost answer of the claim gap (docs/design.md#delivery-semantics) in another form, so it is
 *   `unusable` (and the caller opens the claim gap watch) rather than a thrown error: the loop
 *   handles both in one place, it cannot report either.
 */
export function parsePullBody(text: string): PullResult {
  if (text.trim() === '') return { kind: 'empty', status: 200 };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { kind: 'unusable', reason: `the pull answer is not valid JSON (${messageOf(error)}; ${text.length} characters)` };
  }
  if (value === null) return { kind: 'empty', status: 200 };
  if (typeof value !== 'object' || Array.isArray(value)) {
    const type = Array.isArray(value) ? 'an array' : `a ${typeof value}`;
    return { kind: 'unusable', reason: `the pull answer is ${type}, expected an object with id and command` };
  }
  const record = value as Record<string, unknown>;
  if (!Object.hasOwn(record, 'id') || record.id === null) return { kind: 'empty', status: 200 };
  const literal = readTopLevelId(text);
  if (!literal) {
    return { kind: 'unusable', reason: 'the pull answer has an id porter could not read' };
  }
  const digits = int64Digits(literal);
  if (!digits.ok) return { kind: 'unusable', reason: digits.reason };
  return { kind: 'claimed', id: digits.digits, command: record.command };
}
