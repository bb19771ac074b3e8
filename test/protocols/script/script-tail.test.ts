import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { lastLines, TailBuffer } from '../../../src/protocols/script/tail.js';

describe('TailBuffer', () => {
  test('keeps everything under the limit', () => {
    const tail = new TailBuffer(10);
    tail.push(Buffer.from('abc'));
    tail.push(Buffer.from('def'));
    assert.equal(tail.text(), 'abcdef');
    assert.equal(tail.dropped, 0);
  });

  test('keeps only the last bytes, whatever the chunk sizes', () => {
    const tail = new TailBuffer(8);
    let all = '';
    for (let i = 0; i < 1000; i += 1) {
      const chunk = `${i},`.repeat((i % 7) + 1);
      all += chunk;
      tail.push(Buffer.from(chunk));
      assert.ok(tail.size <= 8);
    }
    assert.equal(tail.text(), all.slice(-8));
    assert.equal(tail.dropped, all.length - 8);
  });

  test('a chunk larger than the limit keeps its end', () => {
    const tail = new TailBuffer(4);
    tail.push(Buffer.from('xy'));
    tail.push(Buffer.from('0123456789'));
    assert.equal(tail.text(), '6789');
    assert.equal(tail.dropped, 8);
  });

  test('a multi-byte character cut at the front is skipped, not garbled', () => {
    const tail = new TailBuffer(5);
    tail.push(Buffer.from('aé€z')); // a(1) é(2) €(3) z(1) = 7 bytes; the tail starts inside é
    assert.equal(tail.text(), '€z');
  });
});

describe('lastLines', () => {
  test('takes the last lines and bounds the characters', () => {
    const text = Array.from({ length: 50 }, (_, i) => `line ${i + 1}`).join('\n') + '\n\n';
    assert.equal(lastLines(text, 3, 1000), 'line 48\nline 49\nline 50');
    const long = lastLines('x'.repeat(5000), 20, 100);
    assert.equal(long.length, 100);
    assert.ok(long.startsWith('…'));
  });
});
