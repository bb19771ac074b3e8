import assert from 'node:assert/strict';
import { Buffer } from 'node:buffer';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { readTopLevelId } from '../../../src/api/wire/int64-json.js';
import { oversizedPullResult, PullBodyScanner } from '../../../src/api/wire/pull-scan.js';
import { fcOptions } from '../../helpers/fc-options.js';

/** Feeds `text` in chunks cut at the given points (bytes), as a socket would. */
function scan(text: string, cuts: readonly number[] = [], limitBytes = 16) {
  const bytes = Buffer.from(text, 'utf8');
  const scanner = new PullBodyScanner();
  let at = 0;
  for (const cut of [...cuts].sort((a, b) => a - b)) {
    const end = Math.min(bytes.length, cut);
    if (end > at) scanner.write(bytes.subarray(at, end));
    at = Math.max(at, end);
  }
  scanner.write(bytes.subarray(at));
  return scanner.result(limitBytes);
}

describe('PullBodyScanner: the id and the command size of an answer too big to keep', () => {
  test('reads the id whichever key comes first, and the command size in bytes', () => {
    const command = `say ${'é'.repeat(10)}`;
    for (const text of [
      `{"id": 42, "command": ${JSON.stringify(command)}}`,
      `{"command": ${JSON.stringify(command)}, "id": 42}`,
      `{ "\\u0069d" : 42 , "nested": {"id": 7, "command": "x"}, "command":${JSON.stringify(command)} }`,
    ]) {
      const result = scan(text, [3, 9, 17]);
      assert.deepEqual(result.id, { kind: 'number', text: '42' }, text);
      assert.equal(result.commandBytes, Buffer.byteLength(command));
      assert.equal(result.commandIsString, true);
      assert.equal(result.object, true);
    }
  });

  test('a claim porter can name is failed with the size; without a usable id it is unusable', () => {
    const big = (id: string) => `{"id":${id},"command":"${'x'.repeat(100)}"}`;
    assert.deepEqual(oversizedPullResult(scan(big('9007199254740993'))), {
      kind: 'oversized',
      id: '9007199254740993',
      reason:
        "command of 100 bytes exceeds porter's limit of 16 bytes for a pull answer; nothing was run — shorten the command in the store (or split it into several), then retry it from the dashboard",
    });
    assert.equal(oversizedPullResult(scan(big('"77"'))).kind, 'oversized');
    for (const [id, reason] of [
      ['-5', /is negative/],
      ['1.5', /not an integer/],
      ['99999999999999999999', /int64/],
      [`"${'9'.repeat(400)}"`, /longer than any int64/],
      ['null', /not an integer/],
    ] as const) {
      const result = oversizedPullResult(scan(big(id)));
      assert.equal(result.kind, 'unusable', id);
      assert.match((result as { reason: string }).reason, /^the pull answer of \d+ bytes exceeds porter's limit of 16 bytes and /);
      assert.match((result as { reason: string }).reason, reason);
    }
    assert.equal(oversizedPullResult(scan(`["${'x'.repeat(100)}"]`)).kind, 'unusable');
    assert.equal(oversizedPullResult(scan(`{"command":"${'x'.repeat(100)}"}`)).kind, 'unusable');
  });

  test('property: over any JSON object cut anywhere, the id is the one readTopLevelId finds', () => {
    const key = fc.constantFrom('id', 'command', 'idx', 'Id', 'x');
    const value = fc.oneof(
      fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)),
      fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }).map((n) => n.toString()),
    );
    const member = fc.tuple(key, value);
    fc.assert(
      fc.property(fc.array(member, { maxLength: 6 }), fc.array(fc.nat({ max: 400 }), { maxLength: 8 }), (members, cuts) => {
        const text = `{${members.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(',')}}`;
        const result = scan(text, cuts);
        const expected = readTopLevelId(text);
        if (result.id === 'too-long') {
          // Not kept past any int64's length: unusable either way.
          const raw = expected === undefined ? '' : expected.kind === 'string' ? JSON.stringify(expected.value) : expected.text;
          assert.ok(raw.length > 160, text);
        } else assert.deepEqual(result.id, expected, text);
        const last = members.filter(([k]) => k === 'command').at(-1);
        if (last === undefined) assert.equal(result.commandBytes, undefined);
        else if (last[1].startsWith('"')) assert.equal(result.commandBytes, Buffer.byteLength(last[1]) - 2);
      }),
      fcOptions({ numRuns: 300 }),
    );
  });
});
