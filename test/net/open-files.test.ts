import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { toTransportError } from '../../src/api/wire/transport.js';
import { isOutOfFiles, parseOpenFileLimit } from '../../src/net/open-files.js';

const LIMITS = `Limit                     Soft Limit           Hard Limit           Units
Max processes             63936                63936                processes
Max open files            1024                 524288               files
Max locked memory         8388608              8388608              bytes
`;

function emfile(): Error {
  return Object.assign(new Error('connect EMFILE 127.0.0.1:8080 - Local (undefined:undefined)'), { code: 'EMFILE' });
}

describe('open files', () => {
  test('the limit is read from /proc/<pid>/limits', () => {
    assert.deepEqual(parseOpenFileLimit(LIMITS), { soft: 1024, hard: 524288 });
    assert.deepEqual(parseOpenFileLimit(LIMITS.replace('524288 ', 'unlimited')), { soft: 1024, hard: Number.POSITIVE_INFINITY });
    assert.equal(parseOpenFileLimit('Max processes 1 1 processes'), undefined);
  });

  test('EMFILE and ENFILE are found however deep a wrapper put them', () => {
    assert.ok(isOutOfFiles(emfile()));
    assert.ok(isOutOfFiles(Object.assign(new Error('x'), { code: 'E_RCON_CONNECT', cause: new Error('y', { cause: emfile() }) })));
    assert.ok(isOutOfFiles(new AggregateError([new Error('a'), Object.assign(new Error('b'), { code: 'ENFILE' })])));
    assert.equal(isOutOfFiles(Object.assign(new Error('refused'), { code: 'ECONNREFUSED' })), false);
  });

  test('a Seller API call that hit EMFILE was not sent, and its message names the limit, not the network', () => {
    const error = toTransportError(emfile(), { route: 'pull', serverId: 's1' }, (text) => text);
    assert.equal(error.failure, 'open-files');
    assert.equal(error.maybeProcessed, false);
    assert.match(error.message, /EMFILE/);
    assert.match(error.message, /open-file limit/);
    assert.match(error.message, /LimitNOFILE=.*ulimit -n/);
    assert.doesNotMatch(error.message, /check api\.baseUrl|firewall/);
  });
});
