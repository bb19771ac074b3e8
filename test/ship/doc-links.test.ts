import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { githubSlug, headingAnchors, linkTargets } from './markdown.js';
import { repoPath, repoRoot } from './repo.js';

/** The docs stand alone: every relative link resolves, and nothing points at a document the repository does not hold. */

const MARKDOWN = [
  'README.md',
  ...readdirSync(repoPath('docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const path = join(dir, entry);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

/** What `grep -rn "DESIGN §\|issue [0-9]\|seller-api.md\|shared/" README.md docs` looks for. */
const OUTSIDE_REFERENCE = /DESIGN §|issue [0-9]|seller-api\.md|shared\//i;

describe('doc links', () => {
  test("the slug rule is GitHub's", () => {
    assert.equal(githubSlug('Beside itzg/minecraft-server (Compose)'), 'beside-itzgminecraft-server-compose');
    assert.equal(githubSlug('ARK: Survival Evolved / Ascended (RCON)'), 'ark-survival-evolved--ascended-rcon');
    assert.equal(githubSlug("Source engine: CS2, CS:GO, Garry's Mod, TF2 (RCON)"), 'source-engine-cs2-csgo-garrys-mod-tf2-rcon');
    assert.equal(githubSlug('`GET /healthz`'), 'get-healthz');
    assert.equal(githubSlug('snake_case and [a link](x.md)'), 'snake_case-and-a-link');
    assert.deepEqual([...headingAnchors('# Logs\n```sh\n# not a heading\n```\n## Logs\n')], ['logs', 'logs-1']);
  });

  test('every relative link in README.md and docs/*.md resolves, anchors included', () => {
    const broken: string[] = [];
    for (const file of MARKDOWN) {
      const text = readFileSync(repoPath(file), 'utf8');
      for (const target of linkTargets(text)) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto: — not a file of the repository
        const [pathPart = '', anchor] = target.split('#', 2);
        const path = pathPart === '' ? repoPath(file) : resolve(dirname(repoPath(file)), decodeURIComponent(pathPart));
        if (!path.startsWith(repoRoot)) {
          broken.push(`${file}: ${target} leaves the repository`);
          continue;
        }
        if (!existsSync(path)) {
          broken.push(`${file}: ${target} (no file ${relative(repoRoot, path)})`);
          continue;
        }
        if (anchor === undefined || anchor === '') continue;
        if (!path.endsWith('.md')) {
          broken.push(`${file}: ${target} (an anchor into a file that is not Markdown)`);
          continue;
        }
        if (!headingAnchors(readFileSync(path, 'utf8')).has(anchor))
          broken.push(`${file}: ${target} (no heading #${anchor} in ${relative(repoRoot, path)})`);
      }
    }
    assert.deepEqual(broken, []);
  });

  test('design.md has the sections the code cites', () => {
    const sections = readFileSync(repoPath('docs/design.md'), 'utf8')
      .split('\n')
      .filter((line) => line.startsWith('## '))
      .map((line) => line.slice(3));
    assert.deepEqual(sections, [
      'The API contract',
      'The call budget',
      'Webhook wake-ups',
      'Lifecycle',
      'Delivery semantics',
      'Executors',
      'Command safety',
      'Configuration',
      'CLI and exit codes',
      'Simulators',
      'Releases',
    ]);
  });

  test('every docs/*.md#anchor cited in the code, tests, bench and packaging resolves', () => {
    const cited = /docs\/([\w.-]+\.md)(?:#([\w-]+))?/g;
    const sources = [...['src', 'test', 'bench', 'scripts', 'systemd'].flatMap((dir) => filesUnder(repoPath(dir))), repoPath('Dockerfile')];
    const broken: string[] = [];
    for (const path of sources) {
      if (/\/(tmp|node_modules)\//.test(relative(repoRoot, path))) continue;
      for (const [reference, file, anchor] of readFileSync(path, 'utf8').matchAll(cited)) {
        const target = repoPath(`docs/${file!}`);
        if (!existsSync(target)) broken.push(`${relative(repoRoot, path)}: ${reference} (no such file)`);
        else if (anchor !== undefined && !headingAnchors(readFileSync(target, 'utf8')).has(anchor))
          broken.push(`${relative(repoRoot, path)}: ${reference} (no such heading)`);
      }
    }
    assert.deepEqual(broken, []);
  });

  test('docs, code, tests and packaging refer to no document outside the repository', () => {
    const found: string[] = [];
    const tree = ['docs', 'src', 'test', 'bench', 'scripts', 'systemd'].flatMap((dir) => filesUnder(repoPath(dir)));
    const files = [repoPath('README.md'), repoPath('Dockerfile'), repoPath('.ci/run'), ...tree].filter(
      // This test names the patterns it looks for; test fixtures are captured game output.
      (path) => !path.endsWith('doc-links.test.ts') && !path.includes('/fixtures/') && !path.endsWith('results.json'),
    );
    for (const path of files) {
      readFileSync(path, 'utf8')
        .split('\n')
        .forEach((line, index) => {
          if (OUTSIDE_REFERENCE.test(line)) found.push(`${relative(repoRoot, path)}:${index + 1}: ${line.trim()}`);
        });
    }
    assert.deepEqual(found, []);
  });

  test('README.md is a front door: at most 160 lines', () => {
    const lines = readFileSync(repoPath('README.md'), 'utf8').trimEnd().split('\n').length;
    assert.ok(lines <= 160, `README.md has ${lines} lines; move detail into docs/`);
  });
});
