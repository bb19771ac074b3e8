import assert from 'node:assert/strict';
import { Buffer } from 'node:buffer';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { JsonTokenizer, LITERAL, NUMBER, STRAY, STRING, type JsonTokenKind } from '../../src/json-tokens.js';
import { locateJsonError } from '../../src/config/json-error.js';
import { fcOptions } from '../helpers/fc-options.js';

interface Token {
  readonly kind: JsonTokenKind;
  readonly start: number;
  readonly end: number;
  readonly problem: string | undefined;
}

/** Every token of `units` pushed in pieces cut at `cuts`. */
function tokensOf(units: string | Uint8Array, cuts: readonly number[] = []): Token[] {
  const tokens: Token[] = [];
  const tokenizer = new JsonTokenizer((kind, start, end) => tokens.push({ kind, start, end, problem: tokenizer.problem }));
  let at = 0;
  for (const cut of [...cuts, units.length].sort((a, b) => a - b)) {
    const end = Math.min(units.length, cut);
    if (end > at) tokenizer.write(units.slice(at, end));
    at = Math.max(at, end);
  }
  tokenizer.end();
  return tokens;
}

const jsonText = fc.jsonValue({ maxDepth: 4 }).map((value) => JSON.stringify(value));
/** JSON's own characters and the ones that break it, in runs: mostly invalid texts. */
const jsonish = fc
  .array(fc.constantFrom(...'{}[]:,"\\/\' \n\t0123456789.eE+-truefalsnlxué\u0001😀'.split(''), 'true', 'null', '\\u00e9', '"a"'), {
    maxLength: 30,
  })
  .map((parts) => parts.join(''));

describe('the JSON tokenizer', () => {
  test('a valid text is its tokens: their texts joined give it back, none with a problem, numbers digit for digit', () => {
    fc.assert(
      fc.property(jsonText, (text) => {
        const tokens = tokensOf(text);
        assert.equal(tokens.map((token) => text.slice(token.start, token.end)).join(''), text);
        assert.deepEqual(
          tokens.filter((token) => token.problem !== undefined || token.kind === STRAY),
          [],
        );
      }),
      fcOptions({ numRuns: 300 }),
    );
    const big = '{"id":12345678901234567890123,"x":[true,false,null,-0.5e-7]}';
    const tokens = tokensOf(big);
    assert.equal(big.slice(tokens[3]!.start, tokens[3]!.end), '12345678901234567890123');
    assert.deepEqual(
      tokens.filter((token) => token.kind === LITERAL || token.kind === NUMBER).map((token) => big.slice(token.start, token.end)),
      ['12345678901234567890123', 'true', 'false', 'null', '-0.5e-7'],
    );
  });

  test('pushed in any pieces, as UTF-8 bytes off a socket, the tokens are those of the whole text', () => {
    fc.assert(
      fc.property(fc.oneof(jsonText, jsonish), fc.array(fc.nat({ max: 80 }), { maxLength: 6 }), (text, cuts) => {
        const bytes = Buffer.from(text, 'utf8');
        assert.deepEqual(tokensOf(bytes, cuts), tokensOf(bytes), text);
      }),
      fcOptions({ numRuns: 500 }),
    );
  });

  test('a token with a fault says where and what, and the next tokens still come', () => {
    const tokens = tokensOf('["a\\x", 01, -, "open');
    assert.deepEqual(
      tokens.filter((token) => token.problem !== undefined).map((token) => [token.kind, token.problem, token.start]),
      [
        [STRING, 'invalid escape sequence in a string (a backslash must be written as \\\\)', 1],
        [NUMBER, 'invalid number (no leading zeros, a digit is needed after ".")', 8],
        [NUMBER, 'invalid number', 12],
        [STRING, 'string is never closed (missing ")', 15],
      ],
    );
  });

  test('the configuration reader finds a fault exactly where JSON.parse refuses a text, and only there', () => {
    fc.assert(
      fc.property(fc.oneof(jsonText, jsonish), (text) => {
        let valid = true;
        try {
          JSON.parse(text);
        } catch {
          valid = false;
        }
        assert.equal(locateJsonError(text) === undefined, valid, text);
      }),
      fcOptions({ numRuns: 1000 }),
    );
  });

  test('nesting deeper than any stack is read to its fault, not given up', () => {
    const text = `${'['.repeat(200_000)}1,]${']'.repeat(199_999)}`;
    assert.deepEqual(locateJsonError(text), { line: 1, column: 200_003, message: 'trailing comma before "]" is not allowed in JSON' });
  });
});
