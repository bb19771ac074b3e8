import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { scratchDirs } from '../helpers/scratch-dirs.js';

/**
 * scripts/with-node.mjs runs CI's second pass on Node 24: it installs the registry's
 * node-<platform>-<arch> package once into node_modules/.cache/porter/node-<major>/ and runs the
 * command with that Node first on PATH. Tried in a scratch folder with an `npm` on PATH that notes
 * its calls and "installs" a `node` that names itself, so no registry is needed.
 */
const script = fileURLToPath(new URL('../../../scripts/with-node.mjs', import.meta.url));
const scratch = scratchDirs('porter-with-node-', 'each');
const pkg = `node-${process.platform}-${process.arch}`;

/** A fake npm whose `install --prefix DIR PKG@MAJOR` writes DIR/node_modules/PKG/bin/node answering `version`. */
function fakeNpm(dir: string, version: string): { bin: string; calls: string } {
  const bin = join(dir, 'fake-bin');
  const calls = join(dir, 'npm-calls');
  mkdirSync(bin);
  const node = [
    '#!/bin/sh',
    `if [ "$1" = -p ]; then echo ${version}; exit 0; fi`,
    'echo "node $*"',
    '[ "$1" = fail ] && exit 3',
    'exit 0',
  ].join('\n');
  const npm = [
    '#!/bin/sh',
    `echo "$*" >> ${JSON.stringify(calls)}`,
    'prefix=$3; eval "pkg=\\${$#}"; pkg=${pkg%@*}',
    'mkdir -p "$prefix/node_modules/$pkg/bin"',
    `cat > "$prefix/node_modules/$pkg/bin/node" <<'EOF'\n${node}\nEOF`,
    'chmod 755 "$prefix/node_modules/$pkg/bin/node"',
  ].join('\n');
  writeFileSync(join(bin, 'npm'), `${npm}\n`);
  chmodSync(join(bin, 'npm'), 0o755);
  return { bin, calls };
}

function withNode(cwd: string, bin: string, args: string[]): Promise<{ code: number; output: string }> {
  const env = { ...process.env, PATH: `${bin}:${process.env.PATH ?? ''}` };
  return new Promise((resolve) =>
    execFile(process.execPath, [script, ...args], { cwd, env, timeout: 60_000 }, (error, stdout, stderr) =>
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, output: stdout + stderr }),
    ),
  );
}

/** The Node the release ships, as scripts/release/ship-node.mjs spells it. */
const SHIP_NODE = /^export const SHIP_NODE = '([\d.]+)';$/m.exec(
  readFileSync(fileURLToPath(new URL('../../../scripts/release/ship-node.mjs', import.meta.url)), 'utf8'),
)![1]!;
const SHIP_MAJOR = SHIP_NODE.split('.')[0]!;

describe('scripts/with-node.mjs', () => {
  test('installs the Node package once into the cache and runs the command with it first on PATH, exit code and all', async () => {
    const dir = scratch();
    // 23: a major the release does not ship, so the newest of that major is fine.
    const { bin, calls } = fakeNpm(dir, 'v23.1.0');
    const home = join(dir, 'node_modules/.cache/porter/node-23');

    const first = await withNode(dir, bin, ['23', 'node', 'hello']);
    assert.equal(first.code, 0, first.output);
    assert.match(first.output, /^node hello$/m, 'the command ran on the installed node');
    assert.match(first.output, /on Node v23\.1\.0/);
    assert.deepEqual(readFileSync(calls, 'utf8').trim().split('\n'), [
      `install --prefix ${home} --no-save --no-package-lock --no-audit --no-fund ${pkg}@23`,
    ]);
    assert.ok(existsSync(join(home, 'node_modules', pkg, 'bin/node')));

    const again = await withNode(dir, bin, ['23', 'node', 'fail']);
    assert.equal(again.code, 3, again.output);
    assert.equal(readFileSync(calls, 'utf8').trim().split('\n').length, 1, 'installed again although cached');
  });

  test('the major the release ships is tested at exactly the version it ships, and another of that major is refused', async () => {
    const dir = scratch();
    const { bin, calls } = fakeNpm(dir, `v${SHIP_NODE}`);
    const shipped = await withNode(dir, bin, [SHIP_MAJOR, 'node', 'hello']);
    assert.equal(shipped.code, 0, shipped.output);
    assert.match(readFileSync(calls, 'utf8'), new RegExp(`${pkg}@${SHIP_NODE.replaceAll('.', '\\.')}$`, 'm'));

    const other = scratch();
    const older = fakeNpm(other, `v${SHIP_MAJOR}.0.1`);
    const refused = await withNode(other, older.bin, [SHIP_MAJOR, 'node', 'hello']);
    assert.equal(refused.code, 1, refused.output);
    assert.match(refused.output, new RegExp(`not Node ${SHIP_NODE.replaceAll('.', '\\.')}`));
  });

  test('a node on PATH of another major is refused before the command runs; a missing major is a usage error', async () => {
    const dir = scratch();
    const { bin } = fakeNpm(dir, 'v20.19.0');
    const wrong = await withNode(dir, bin, ['23', 'node', 'hello']);
    assert.equal(wrong.code, 1, wrong.output);
    assert.match(wrong.output, /node on PATH is v20\.19\.0, not Node 23/);
    assert.doesNotMatch(wrong.output, /^node hello$/m);

    const usage = await withNode(dir, bin, ['npm', 'test']);
    assert.equal(usage.code, 64, usage.output);
    assert.match(usage.output, /usage: node scripts\/with-node\.mjs <major> <command>/);
  });
});
