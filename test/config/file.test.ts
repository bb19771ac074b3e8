import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { configPathFrom, loadConfig } from '../../src/config/load.js';
import { configError, minimal, tempDir, TOKEN } from './helpers.js';
import type { TempDir } from './helpers.js';

describe('reading the config file', () => {
  let dir: TempDir;
  before(async () => {
    dir = await tempDir();
  });
  after(async () => {
    await dir.remove();
  });

  test('a valid file loads and records its absolute path', async () => {
    const file = await dir.write('ok.json', JSON.stringify(minimal()));
    const config = await loadConfig(file, {});
    assert.equal(config.configPath, file);
    assert.equal(config.api.token, TOKEN);
  });

  test('a missing file names the file and says it does not exist', async () => {
    const file = join(dir.path, 'nope.json');
    const error = await configError(loadConfig(file, {}));
    assert.match(error.message, /nope\.json/);
    assert.match(error.message, /no such file/);
  });

  test('a path that cannot be read as a file names it', async () => {
    const error = await configError(loadConfig(dir.path, {}));
    assert.ok(error.message.includes(dir.path));
    assert.match(error.message, /directory/);
  });

  test('an empty file says so', async () => {
    const file = await dir.write('empty.json', '  \n');
    const error = await configError(loadConfig(file, {}));
    assert.match(error.message, /empty\.json is empty/);
  });

  test('a JSON syntax error names file, line and column, and never quotes the secret around it', async () => {
    const text = `{\n  "api": {\n    "baseUrl": "https://seller.example.com",\n    "token": "${TOKEN}",\n  }\n}\n`;
    const file = await dir.write('syntax.json', text);
    const error = await configError(loadConfig(file, {}));
    assert.ok(error.message.startsWith(`${file}:5:3: invalid JSON`), error.message);
    assert.match(error.message, /trailing comma/);
    assert.ok(!error.message.includes(TOKEN));
  });

  test('an unquoted secret in a broken file is not echoed either', async () => {
    const file = await dir.write('bare.json', `{ "api": { "token": ${TOKEN} } }`);
    const error = await configError(loadConfig(file, {}));
    assert.match(error.message, /:1:21: invalid JSON: unexpected text/);
    assert.ok(!error.message.includes(TOKEN));
    assert.ok(!error.message.includes('gci_'));
  });

  test('a UTF-8 byte order mark at the start is accepted', async () => {
    const file = await dir.write('bom.json', `\uFEFF${JSON.stringify(minimal())}`);
    const config = await loadConfig(file, {});
    assert.equal(config.api.token, TOKEN);
  });
});

describe('choosing the config file', () => {
  test('-c wins over PORTER_CONFIG', () => {
    assert.equal(configPathFrom('/etc/porter/a.json', { PORTER_CONFIG: '/etc/porter/b.json' }), '/etc/porter/a.json');
  });

  test('PORTER_CONFIG is used without -c, made absolute', () => {
    assert.equal(configPathFrom(undefined, { PORTER_CONFIG: '/srv/porter.json' }), '/srv/porter.json');
    assert.equal(configPathFrom(undefined, { PORTER_CONFIG: 'rel.json' }), join(process.cwd(), 'rel.json'));
  });

  test('neither given: a ConfigError saying how to give one', () => {
    for (const env of [{}, { PORTER_CONFIG: '' }]) {
      assert.throws(
        () => configPathFrom(undefined, env),
        (error: unknown) =>
          error instanceof Error &&
          (error as { exitCode?: number }).exitCode === 78 &&
          /-c FILE/.test(error.message) &&
          /PORTER_CONFIG/.test(error.message),
      );
    }
  });
});
