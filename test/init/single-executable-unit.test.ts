import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { forSingleExecutable } from '../../src/init/systemd-step.js';

const shipped = readFileSync(join(import.meta.dirname, '../../../systemd/porter.service'), 'utf8');
const pkg = JSON.parse(readFileSync(join(import.meta.dirname, '../../../package.json'), 'utf8')) as {
  version: string;
  repository: { url: string };
};

test("a single executable's unit runs that file, wherever the owner put it, with the shipped arguments", () => {
  const unit = forSingleExecutable(shipped, '/opt/porter/porter-9.9.9-linux-x64');
  const execStart = unit.split('\n').filter((line) => line.startsWith('ExecStart='));
  assert.deepEqual(execStart, ['ExecStart=/opt/porter/porter-9.9.9-linux-x64 run --config /etc/porter/config.json']);
});

test("its Documentation= names this version's docs in the repository, not an npm install's files", () => {
  const unit = forSingleExecutable(shipped, '/usr/local/bin/porter');
  const docs = unit
    .split('\n')
    .filter((line) => line.startsWith('Documentation='))
    .flatMap((line) => line.slice('Documentation='.length).split(' '));
  const repository = pkg.repository.url.replace(/^git\+/, '').replace(/\.git$/, '');
  assert.ok(docs.length >= 4, 'the shipped unit names its docs');
  for (const url of docs) assert.ok(url.startsWith(`${repository}/blob/v${pkg.version}/`), url);
  assert.doesNotMatch(unit, /node_modules/);
  // Everything else is the shipped unit, line for line.
  const other = (text: string) => text.split('\n').filter((line) => !/^(ExecStart|Documentation)=/.test(line));
  assert.deepEqual(other(unit), other(shipped));
});
