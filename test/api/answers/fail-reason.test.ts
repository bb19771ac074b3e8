import { test } from 'node:test';
import assert from 'node:assert/strict';
import { truncateReason } from '../../../src/api/answers/fail-reason.js';

test('a reason within 1,000 code points is sent as is', () => {
  const reason = '😀'.repeat(1000); // 2,000 UTF-16 units, 1,000 code points
  assert.equal(truncateReason(reason), reason);
  assert.equal(truncateReason('short'), 'short');
});

test('a longer reason is cut to 1,000 code points including the closing …, never splitting a surrogate pair', () => {
  const cut = truncateReason('😀'.repeat(1001));
  assert.equal(Array.from(cut).length, 1000);
  assert.equal(cut, `${'😀'.repeat(999)}…`);
  assert.ok(!/[\uD800-\uDBFF](?![\uDC00-\uDFFF])/.test(cut), 'no lone high surrogate');
  const mixed = truncateReason('a😀'.repeat(600));
  assert.equal(Array.from(mixed).length, 1000);
  assert.ok(mixed.endsWith('a…') || mixed.endsWith('😀…'));
});

test('the bound is a parameter', () => {
  assert.equal(truncateReason('abcdef', 4), 'abc…');
  assert.equal(truncateReason('abcd', 4), 'abcd');
});
