import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { int64Digits, parsePullBody, readTopLevelId } from '../../../src/api/wire/int64-json.js';

describe('readTopLevelId', () => {
  test('returns the number literal verbatim, beyond 2^53', () => {
    assert.deepEqual(readTopLevelId('{"id":9007199254740993,"command":"x"}'), { kind: 'number', text: '9007199254740993' });
    assert.equal((JSON.parse('{"id":9007199254740993}') as { id: number }).id, 9007199254740992, 'JSON.parse alone loses the digit');
  });

  test('skips "id" inside strings and nested objects and arrays', () => {
    const text =
      '{ "note": "\\"id\\": 5, {\\"id\\":6}", "meta": {"id": 1, "x": [{"id": 2}, "}"]}, "list": [3, {"id": 4}], "id" : 12345678901234567890 , "command": "id"}';
    JSON.parse(text);
    assert.deepEqual(readTopLevelId(text), { kind: 'number', text: '12345678901234567890' });
  });

  test('finds an escaped key and lets the last duplicate win, like JSON.parse', () => {
    assert.deepEqual(readTopLevelId('{"\\u0069d": 7}'), { kind: 'number', text: '7' });
    assert.deepEqual(readTopLevelId('{"id": 1, "id": 9007199254740995}'), { kind: 'number', text: '9007199254740995' });
  });

  test('tells strings and other literals apart; undefined without an id or for non-objects', () => {
    assert.deepEqual(readTopLevelId('{"id":"42"}'), { kind: 'string', value: '42' });
    assert.deepEqual(readTopLevelId('{"id":true}'), { kind: 'other', text: 'true' });
    assert.deepEqual(readTopLevelId('{"id":{"a":1}}'), { kind: 'other', text: '{"a":1}' });
    assert.equal(readTopLevelId('{"command":"x"}'), undefined);
    assert.equal(readTopLevelId('{}'), undefined);
    assert.equal(readTopLevelId('[{"id":1}]'), undefined);
  });
});

describe('int64Digits', () => {
  test('accepts integer literals and digit strings in the int64 range', () => {
    assert.deepEqual(int64Digits({ kind: 'number', text: '9223372036854775807' }), { ok: true, digits: '9223372036854775807' });
    assert.deepEqual(int64Digits({ kind: 'number', text: '0' }), { ok: true, digits: '0' });
    assert.deepEqual(int64Digits({ kind: 'string', value: '9007199254740993' }), { ok: true, digits: '9007199254740993' });
  });

  test('refuses fractions, exponents, non-digits, negatives and values outside int64, saying why', () => {
    for (const literal of [
      { kind: 'number', text: '1.5' },
      { kind: 'number', text: '1e3' },
      { kind: 'number', text: '1.0' },
      { kind: 'string', value: 'abc' },
      { kind: 'string', value: ' 12' },
      { kind: 'string', value: '' },
      { kind: 'other', text: 'true' },
    ] as const) {
      const result = int64Digits(literal);
      assert.equal(result.ok, false, JSON.stringify(literal));
      assert.match((result as { reason: string }).reason, /not an integer/);
    }
    for (const literal of [
      { kind: 'number', text: '-5' },
      { kind: 'number', text: '-0' },
      { kind: 'string', value: '-9223372036854775808' },
    ] as const) {
      const result = int64Digits(literal);
      assert.equal(result.ok, false, JSON.stringify(literal));
      assert.match((result as { reason: string }).reason, /is negative/);
    }
    const big = int64Digits({ kind: 'number', text: '9223372036854775808' });
    assert.equal(big.ok, false);
    assert.match((big as { reason: string }).reason, /int64/);
  });
});

describe('parsePullBody: the pull answer rules of docs/design.md', () => {
  test('nothing due: empty body, whitespace, null, {}, no id, id null', () => {
    for (const body of ['', '  \n', 'null', '{}', '{"command":"say hi"}', '{"id":null,"command":null}']) {
      assert.deepEqual(parsePullBody(body), { kind: 'empty', status: 200 }, JSON.stringify(body));
    }
  });

  test('a claim keeps the exact id and the command as sent, whatever its type', () => {
    assert.deepEqual(parsePullBody('{"id":9007199254740993,"command":"give steve diamond"}'), {
      kind: 'claimed',
      id: '9007199254740993',
      command: 'give steve diamond',
    });
    assert.deepEqual(parsePullBody('{"command":{"a":[1]},"id":"18446744"}'), { kind: 'claimed', id: '18446744', command: { a: [1] } });
    assert.deepEqual(parsePullBody('{"id":3}'), { kind: 'claimed', id: '3', command: undefined });
  });

  test('unusable: a non-integer id, malformed JSON, a JSON value that is not an object', () => {
    const cases: Array<[string, RegExp]> = [
      ['{"id":"abc","command":"x"}', /not an integer/],
      ['{"id":1.5,"command":"x"}', /not an integer/],
      ['{"id":true,"command":"x"}', /not an integer/],
      ['{"id":99999999999999999999,"command":"x"}', /int64/],
      ['{"id":-7,"command":"x"}', /negative/],
      ['{"id":"-7","command":"x"}', /negative/],
      ['{"id": 12, "command": "say hel', /not valid JSON/],
      ['[{"id":1}]', /an array/],
      ['"text"', /a string/],
      ['42', /a number/],
    ];
    for (const [body, reason] of cases) {
      const result = parsePullBody(body);
      assert.equal(result.kind, 'unusable', body);
      assert.match((result as { reason: string }).reason, reason);
    }
  });

  test('a 5 KB command and one with CR/LF come through untouched (the loop decides)', () => {
    const long = 'say ' + 'x'.repeat(5 * 1024);
    assert.deepEqual(parsePullBody(JSON.stringify({ id: 1, command: long })), { kind: 'claimed', id: '1', command: long });
    assert.deepEqual(parsePullBody('{"id":2,"command":"a\\r\\nb"}'), { kind: 'claimed', id: '2', command: 'a\r\nb' });
  });
});
