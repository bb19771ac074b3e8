import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { porterCommand } from '../../src/init/porter-command.js';

/** The command init's "Next:" lines name: the one that runs this porter from where init ran. */
test('porter on the PATH when it is this program; npx porter under npx; else node and the path', () => {
  const dir = mkdtempSync(join(tmpdir(), 'porter-command-'));
  try {
    const script = join(dir, 'lib', 'porter.js');
    const bin = join(dir, 'bin');
    const other = join(dir, 'other');
    mkdirSync(join(dir, 'lib'));
    mkdirSync(bin);
    mkdirSync(other);
    writeFileSync(script, '#!/usr/bin/env node\n');
    chmodSync(script, 0o755);
    symlinkSync(script, join(bin, 'porter'));
    writeFileSync(join(other, 'porter'), '#!/bin/sh\n');
    chmodSync(join(other, 'porter'), 0o755);

    assert.equal(porterCommand({ PATH: `${other}:${bin}` }, dir, script), 'porter', 'an installed porter that is this one');
    assert.equal(porterCommand({ PATH: other }, dir, script), 'node lib/porter.js', 'another program called porter is not this one');
    assert.equal(porterCommand({ PATH: other }, join(dir, 'bin'), script), `node ${script}`, 'a path that climbs out is shown whole');
    assert.equal(porterCommand({ PATH: bin, npm_command: 'exec' }, dir, script), 'npx porter', 'npx puts its bin on its own PATH only');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
