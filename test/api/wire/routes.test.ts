import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRoutePaths, parseBaseUrl } from '../../../src/api/wire/routes.js';
import { ConfigError } from '../../../src/errors.js';

const defaults = {
  pull: '/v1/seller/servers/{serverId}/commands/pull',
  done: '/v1/seller/servers/{serverId}/commands/{id}/done',
  fail: '/v1/seller/servers/{serverId}/commands/{id}/fail',
};

test('default templates expand with the exact id digits', () => {
  const routes = createRoutePaths(defaults, parseBaseUrl('https://seller.example.com'));
  assert.equal(routes.pull('abc'), '/v1/seller/servers/abc/commands/pull');
  assert.equal(routes.done('abc', '9007199254740993'), '/v1/seller/servers/abc/commands/9007199254740993/done');
  assert.equal(routes.fail('abc', '1'), '/v1/seller/servers/abc/commands/1/fail');
  assert.equal(routes.servers(), '/v1/seller/servers');
});

test('values are URL-encoded and the base URL path is kept as a prefix', () => {
  const routes = createRoutePaths(
    { pull: '/x/{serverId}/pull', done: '/x/{serverId}/c/{id}?done', fail: '/x/{id}/{serverId}' },
    parseBaseUrl('https://gw.example.com/store/api/'),
  );
  assert.equal(routes.pull('a/b c'), '/store/api/x/a%2Fb%20c/pull');
  assert.equal(routes.done('s', '12'), '/store/api/x/s/c/12?done');
  assert.equal(routes.fail('s', '12'), '/store/api/x/12/s');
  assert.equal(routes.servers(), '/store/api/v1/seller/servers');
});

test('a pull template with {id} is a configuration error naming api.routes', () => {
  const routes = createRoutePaths({ ...defaults, pull: '/p/{id}' }, parseBaseUrl('https://a.example'));
  assert.throws(
    () => routes.pull('s'),
    (error: unknown) => error instanceof ConfigError && /api\.routes/.test(error.message),
  );
});

test('plain http is refused except to loopback', () => {
  for (const url of ['http://127.0.0.1:8080', 'http://localhost:1', 'http://[::1]:9', 'https://seller.example.com']) {
    assert.doesNotThrow(() => parseBaseUrl(url), url);
  }
  assert.throws(
    () => parseBaseUrl('http://seller.example.com'),
    (error: unknown) => error instanceof ConfigError && /api\.baseUrl.*https/.test(error.message),
  );
  assert.throws(() => parseBaseUrl('ftp://x'), ConfigError);
  assert.throws(() => parseBaseUrl('not a url'), ConfigError);
});
