import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import { describe, test } from 'node:test';
import { linkSignals } from '../../src/abort.js';

describe('linkSignals', () => {
  test('aborts with the reason of whichever source aborts first', () => {
    const a = new AbortController();
    const b = new AbortController();
    const linked = linkSignals(a.signal, undefined, b.signal);
    b.abort(new Error('b stopped'));
    assert.equal(linked.signal.aborted, true);
    assert.equal((linked.signal.reason as Error).message, 'b stopped');
    linked.release();
  });

  test('a source already aborted aborts it at once', () => {
    const a = new AbortController();
    a.abort('gone');
    assert.equal(linkSignals(a.signal).signal.reason, 'gone');
  });

  test('release leaves nothing on a long-lived source, however often it is linked', () => {
    const lifetime = new AbortController();
    for (let i = 0; i < 10_000; i++) linkSignals(lifetime.signal, new AbortController().signal).release();
    assert.equal(getEventListeners(lifetime.signal, 'abort').length, 0);
    const linked = linkSignals(lifetime.signal);
    linked.release();
    lifetime.abort();
    assert.equal(linked.signal.aborted, false, 'a released link no longer follows its sources');
  });
});
