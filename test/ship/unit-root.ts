import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import assert from 'node:assert/strict';
import { repoPath } from './repo.js';

/**
 * A throw-away root for `systemd-analyze verify --root=`: the unit in etc/systemd/system,
 * systemd's own units (for the targets it names) and, at /usr/local/bin/porter, a stub script
 * or nothing (the packaging test installs the real package there with `npm i -g --prefix`).
 */
export function makeUnitRoot(porter: 'stub' | 'absent'): string {
  const root = mkdtempSync(join(tmpdir(), 'porter-unit-'));
  const systemUnits = ['/usr/lib/systemd/system', '/lib/systemd/system'].find((dir) => existsSync(dir));
  assert.ok(systemUnits, "systemd's units are not installed (/usr/lib/systemd/system)");
  cpSync(systemUnits, join(root, 'usr/lib/systemd/system'), { recursive: true, verbatimSymlinks: true });
  mkdirSync(join(root, 'etc/systemd/system'), { recursive: true });
  cpSync(repoPath('systemd/porter.service'), join(root, 'etc/systemd/system/porter.service'));
  // ExecReload= runs the system's kill(1), which every real host has (procps on Debian).
  mkdirSync(join(root, 'bin'), { recursive: true });
  writeFileSync(join(root, 'bin/kill'), '#!/bin/sh\nexit 0\n', { mode: 0o755 });
  if (porter === 'absent') return root;
  mkdirSync(join(root, 'usr/local/bin'), { recursive: true });
  const target = join(root, 'usr/local/bin/porter');
  writeFileSync(target, '#!/bin/sh\nexit 0\n');
  chmodSync(target, 0o755);
  return root;
}
