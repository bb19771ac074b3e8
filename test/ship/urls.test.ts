import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { projectUrls } from './project-urls.js';
import { repoRoot } from './repo.js';

/**
 * The project's public home is not settled, so every address of it (the repository, its release
 * downloads, its image, the docs' and alerts' links) derives from package.json's `repository`
 * through scripts/release/urls.mjs. This finds every spelling of one in the tracked files and
 * holds each to the derived one: moving the home is one edit of package.json, and this test lists
 * every line still pointing at the old one.
 */

// A repository or image whose name is porter's, on GitHub or its registry: the project's own spellings.
const GITHUB = /https?:\/\/github\.com\/[\w.-]+\/[\w.-]*porter[\w.-]*/gi;
const GHCR = /ghcr\.io\/[\w.-]+\/[\w.-]*porter[\w.-]*(?::[\w.${}-]+)?/gi;
// Placeholders that once stood for the unsettled home.
const PLACEHOLDERS = /registry\.example\.com|example\.com\/porter|porter\.example\.com/gi;

function trackedTextFiles(): string[] {
  const files = execFileSync('git', ['ls-files', '-z'], { cwd: repoRoot, encoding: 'utf8' }).split('\0').filter(Boolean);
  // The lockfile names other projects' packages; the binary-free rest is text.
  return files.filter((file) => file !== 'package-lock.json' && !/\.(png|jpg|ico|wasm|tgz)$/.test(file));
}

describe("the project's addresses, from package.json alone", () => {
  test('every GitHub address of porter is the repository package.json names, and every image of porter its ghcr.io image', async () => {
    const urls = await projectUrls();
    const version = urls.image.slice(urls.image.lastIndexOf(':') + 1);
    const imageName = urls.image.slice(0, urls.image.lastIndexOf(':'));
    const wrong: string[] = [];
    let found = 0;
    for (const file of trackedTextFiles()) {
      const text = readFileSync(join(repoRoot, file), 'utf8');
      text.split('\n').forEach((line, index) => {
        const where = `${file}:${index + 1}`;
        for (const match of line.matchAll(GITHUB)) {
          found++;
          const url = match[0].replace(/\.git$/, '');
          if (url !== urls.repository && !url.startsWith(`${urls.repository}/`))
            wrong.push(`${where}: ${match[0]} (not ${urls.repository})`);
        }
        for (const match of line.matchAll(GHCR)) {
          found++;
          const [name, tag] = match[0].split(':') as [string, string | undefined];
          // A tag is this version, or a workflow's variable that the tag check holds to it.
          if (name !== imageName || (tag !== undefined && tag !== version && !tag.startsWith('${')))
            wrong.push(`${where}: ${match[0]} (not ${urls.image})`);
        }
        for (const match of line.matchAll(PLACEHOLDERS)) wrong.push(`${where}: ${match[0]} (a placeholder for ${urls.repository})`);
      });
    }
    assert.deepEqual(wrong, [], `spell them as scripts/release/urls.mjs derives them:\n${wrong.join('\n')}`);
    assert.ok(found >= 10, `only ${found} addresses found: the search no longer sees them`);
  });

  test('the release downloads in the docs are the repository releases of this version', async () => {
    const urls = await projectUrls();
    const install = readFileSync(join(repoRoot, 'docs/install.md'), 'utf8');
    const bases = [...install.matchAll(/BASE=(\S+)/g)].map((m) => m[1]!.replace('$V', urls.releaseBase.split('/v').at(-1)!));
    assert.ok(bases.length > 0, 'docs/install.md sets BASE= for its download lines');
    for (const base of bases) assert.equal(base, urls.releaseBase);
  });
});
