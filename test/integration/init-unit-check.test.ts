import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { checkArgs, configOfUnit, parseUnit, unitName } from '../../src/init/unit-check.js';
import { CLI } from './harness.js';

function porter(args: readonly string[]): Promise<{ code: number; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], { timeout: 60_000 }, (error, _stdout, stderr) => {
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stderr });
    });
  });
}

/**
 * `porter check --unit` (and `porter init --systemd`, which runs it) reads the unit as systemd
 * has it and runs `porter check` through systemd-run with the unit's user, state directory and
 * credentials. The run under a real systemd: test/ship/systemd-nspawn.test.ts.
 */

const shipped = readFileSync(join(import.meta.dirname, '../../../systemd/porter.service'), 'utf8');

describe('porter check --unit: the unit read as systemd reads it', () => {
  test('the shipped unit gives the systemd-run line of docs/install.md, with the service user shared by name', () => {
    const service = parseUnit('porter.service', shipped);
    assert.deepEqual(service.credentials, ['porter-api-token:/etc/porter/api-token', 'porter-rcon-password:/etc/porter/rcon-password']);
    assert.equal(configOfUnit(service), '/etc/porter/config.json');
    assert.deepEqual(checkArgs(service, '/etc/porter/config.json'), [
      '--pipe',
      '--wait',
      '--quiet',
      '--collect',
      '-p',
      'DynamicUser=yes',
      // The running service's dynamic user: a check while it runs leaves its state directory's owner alone.
      '-p',
      'User=porter',
      '-p',
      'StateDirectory=porter',
      '-p',
      'LoadCredential=porter-api-token:/etc/porter/api-token',
      '-p',
      'LoadCredential=porter-rcon-password:/etc/porter/rcon-password',
      '/usr/local/bin/porter',
      'check',
      '-c',
      '/etc/porter/config.json',
    ]);
  });

  test('docs/install.md gives the same systemd-run line', () => {
    const doc = readFileSync(join(import.meta.dirname, '../../../docs/install.md'), 'utf8');
    const block = /```sh\nsudo systemd-run (.+?)\n```/s.exec(doc)?.[1];
    assert.ok(block, 'install.md shows the systemd-run line');
    const words = block.replace(/\\\n/g, ' ').split(/\s+/).filter(Boolean);
    assert.deepEqual(words, checkArgs(parseUnit('porter.service', shipped), '/etc/porter/config.json'));
  });

  test('drop-ins as `systemctl cat` prints them: an empty LoadCredential= resets, a later ExecStart= wins', () => {
    const dropIn = [
      '# /etc/systemd/system/porter.service.d/override.conf',
      '[Service]',
      'ExecStart=',
      'ExecStart=-/opt/porter/bin/porter run \\',
      '  --config=/srv/porter/config.json',
      'LoadCredential=',
      'LoadCredential=porter-api-token:/srv/porter/token',
      '[Install]',
      'LoadCredential=ignored:/outside/the/service/section',
    ].join('\n');
    const service = parseUnit('porter.service', `${shipped}\n${dropIn}\n`);
    assert.deepEqual(service.credentials, ['porter-api-token:/srv/porter/token']);
    assert.deepEqual(service.execStart, ['/opt/porter/bin/porter', 'run', '--config=/srv/porter/config.json']);
    assert.equal(configOfUnit(service), '/srv/porter/config.json');
  });

  test('a unit with a fixed user and no credentials, and unit names with or without .service', () => {
    const service = parseUnit('other.service', '[Service]\nUser=games\nExecStart=/usr/bin/porter run -c /etc/other.json\n');
    assert.deepEqual(checkArgs(service, '/etc/other.json').slice(0, 6), ['--pipe', '--wait', '--quiet', '--collect', '-p', 'User=games']);
    assert.equal(configOfUnit(service), '/etc/other.json');
    assert.equal(unitName('porter'), 'porter.service');
    assert.equal(unitName('porter.service'), 'porter.service');
  });

  test('flags that do not go together are a usage error (64)', async () => {
    const shard = await porter(['check', '--unit', '--shard', '0/2']);
    assert.equal(shard.code, 64, shard.stderr);
    assert.match(shard.stderr, /--unit checks what the unit runs: it takes no --shard/);
    const unitDir = await porter(['init', '--unit-dir', '/tmp/nowhere']);
    assert.equal(unitDir.code, 64, unitDir.stderr);
    assert.match(unitDir.stderr, /--unit-dir goes with --systemd/);
  });
});
