import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_IDENTIFIERS, normalizeIdentifiers } from '../../src/players/normalize.js';

describe('normalizeIdentifiers', () => {
  test('trims, lowercases, drops empty ones and keeps first-seen order without duplicates', () => {
    const result = normalizeIdentifiers(['  Steve ', 'alex', '', '   ', 'STEVE', 'Alex', 'jeb_', '\tNotch\n']);
    assert.deepEqual(result, { ids: ['steve', 'alex', 'jeb_', 'notch'], cut: 0 });
  });

  test('an empty list stays empty', () => {
    assert.deepEqual(normalizeIdentifiers([]), { ids: [], cut: 0 });
  });

  test('4,097 distinct identifiers become 4,096 and say that 1 was cut', () => {
    const raw = Array.from({ length: 4097 }, (_, i) => `Player${i}`);
    const { ids, cut } = normalizeIdentifiers(raw);
    assert.equal(MAX_IDENTIFIERS, 4096);
    assert.equal(ids.length, 4096);
    assert.equal(cut, 1);
    assert.equal(ids[0], 'player0');
    assert.equal(ids[4095], 'player4095');
    assert.ok(!ids.includes('player4096'));
  });

  test('duplicates do not count towards the limit or the cut', () => {
    const raw = [...Array.from({ length: 4096 }, (_, i) => `p${i}`), 'P0', ' p1 ', 'p2'];
    assert.deepEqual(normalizeIdentifiers(raw).cut, 0);
  });
});
