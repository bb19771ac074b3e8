import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { encodeRequest, parseFrame } from '../../../src/protocols/webrcon/protocol.js';
import { webrconAddress } from '../../../src/protocols/webrcon/url.js';

describe('WebRCON protocol', () => {
  test('requests carry Identifier, Message and Name', () => {
    assert.deepEqual(JSON.parse(encodeRequest(7, 'say "hi"')), { Identifier: 7, Message: 'say "hi"', Name: 'porter' });
  });

  test("frames: Rust's shape, odd Messages, and what is not a frame", () => {
    assert.deepEqual(parseFrame('{"Message":"ok","Identifier":3,"Type":"Generic","Stacktrace":""}'), {
      identifier: 3,
      message: 'ok',
      type: 'Generic',
    });
    assert.deepEqual(parseFrame('{"Identifier":-1,"Message":null}'), { identifier: -1, message: '', type: undefined });
    assert.deepEqual(parseFrame('{"Identifier":1,"Message":{"a":1}}')?.message, '{"a":1}');
    for (const text of ['not json', 'null', '[]', '{"Message":"x"}', '{"Identifier":"1"}', '{"Identifier":1.5}']) {
      assert.equal(parseFrame(text), undefined, text);
    }
  });
});

describe('WebRCON address', () => {
  test('the password is the literal path; the display form hides it', () => {
    const address = webrconAddress('127.0.0.1', 28016, "p@ss:w0rd$!(x)*+,;='&~%41");
    assert.equal(address.url, "ws://127.0.0.1:28016/p@ss:w0rd$!(x)*+,;='&~%41");
    assert.equal(address.display, 'ws://127.0.0.1:28016/<password>');
    assert.equal(address.literal, true);
  });

  test('a password a URL path cannot carry literally is flagged', () => {
    for (const password of ['two words', 'a#b', 'a?b', 'ü', 'a\\b', '..', 'x/../y']) {
      assert.equal(webrconAddress('h', 1, password).literal, false, password);
    }
  });

  test('IPv6 hosts are bracketed', () => {
    assert.equal(webrconAddress('::1', 28016, 'pw').url, 'ws://[::1]:28016/pw');
  });
});
