import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { locateJsonError } from '../../src/config/json-error.js';

describe('locating JSON syntax errors', () => {
  const cases: [string, string, number, number, RegExp][] = [
    ['trailing comma in an object', '{\n  "a": 1,\n}', 3, 1, /trailing comma before "}"/],
    ['trailing comma in an array', '[1, 2, ]', 1, 8, /trailing comma before "]"/],
    ['missing comma', '{\n  "a": 1\n  "b": 2\n}', 3, 3, /expected "," or "}"/],
    ['a comment', '{ // note\n}', 1, 3, /comments are not allowed/],
    ['single quotes', "{ 'a': 1 }", 1, 3, /double quotes/],
    ['unterminated string', '{ "a": "open\n}', 1, 13, /line break inside a string/],
    ['string never closed at the end', '{ "a": "open', 1, 8, /never closed/],
    ['bad escape', '{ "a": "C:\\dir" }', 1, 11, /invalid escape/],
    ['leading zero', '{ "a": 012 }', 1, 8, /invalid number/],
    ['bare word', '{ "a": yes }', 1, 8, /unexpected text/],
    ['truncated file', '{ "a": [1, 2', 1, 13, /unexpected end of file/],
    ['text after the document', '{}\n}', 2, 1, /after the end/],
    ['missing colon', '{ "a" 1 }', 1, 7, /expected ":"/],
  ];
  for (const [name, text, line, column, message] of cases) {
    test(name, () => {
      assert.throws(() => JSON.parse(text));
      const found = locateJsonError(text);
      assert.ok(found, 'expected a problem to be found');
      assert.deepEqual([found.line, found.column], [line, column], found.message);
      assert.match(found.message, message);
    });
  }

  test('valid JSON has no problem', () => {
    for (const text of ['{}', '[]', '{"a":[1,-2.5e3,true,false,null,"\\u00e9\\n"],"b":{}}', ' 0 ']) {
      assert.doesNotThrow(() => JSON.parse(text));
      assert.equal(locateJsonError(text), undefined);
    }
  });

  test('letters and digits around the error are not quoted back', () => {
    const found = locateJsonError('{ "token": gci_abc123 }');
    assert.ok(found);
    assert.ok(!found.message.includes('gci') && !found.message.includes('abc'));
  });
});
