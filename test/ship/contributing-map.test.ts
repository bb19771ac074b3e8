import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { repoPath } from './repo.js';

/**
 * docs/contributing.md's map of the source is the next maintainer's way in: every folder and
 * root file of src/ has its line in the Source layout, no line names one that is gone, and the
 * Layers paragraph lists the folders in the order .dependency-cruiser.cjs enforces.
 */

const CONTRIBUTING = readFileSync(repoPath('docs/contributing.md'), 'utf8');

/** The fenced block under "## Source layout". */
function layoutBlock(): string {
  const section = CONTRIBUTING.slice(CONTRIBUTING.indexOf('## Source layout'));
  const start = section.indexOf('```\n') + 4;
  return section.slice(start, section.indexOf('```', start));
}

/** The names the block gives at one indent, e.g. 2 for src/'s own entries. */
function namesAt(block: string, indent: number): string[] {
  const pattern = new RegExp(`^ {${indent}}([A-Za-z0-9_.-]+/?)(?: |$)`);
  return block.split('\n').flatMap((line) => {
    const found = pattern.exec(line);
    return found ? [found[1]!] : [];
  });
}

function entriesOf(dir: string): string[] {
  return readdirSync(repoPath(dir))
    .filter((name) => statSync(join(repoPath(dir), name)).isDirectory() || /\.ts$/.test(name))
    .map((name) => (statSync(join(repoPath(dir), name)).isDirectory() ? `${name}/` : name));
}

test('the Source layout names every folder and root file of src/, and nothing that is gone', () => {
  const listed = namesAt(layoutBlock(), 2).sort();
  assert.deepEqual(listed, entriesOf('src').sort());
});

test('the Layers paragraph lists the folders in the order the dependency rules enforce', () => {
  const rules = readFileSync(repoPath('.dependency-cruiser.cjs'), 'utf8');
  const layers = /const LAYERS = \[([\s\S]*?)\];/.exec(rules)![1]!;
  const enforced = [...layers.matchAll(/^\s*'([^']+)'/gm)].map((m) => m[1]!).filter((name) => name !== '(root)');
  const section = CONTRIBUTING.slice(CONTRIBUTING.indexOf('### Layers'));
  const sentence = section.slice(section.indexOf('Lowest first:'), section.indexOf('A new folder takes its place'));
  const documented = [...sentence.matchAll(/`([a-z]+)`/g)].map((m) => m[1]!);
  assert.deepEqual(documented, enforced);
});
