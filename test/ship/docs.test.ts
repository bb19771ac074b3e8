import { readdirSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { configJsonSchema } from '../../src/config/json-schema.js';
import { configSchema } from '../../src/config/schema.js';
import { GAMES } from '../../src/games/registry.js';
import { createMetrics } from '../../src/health/metrics.js';
import { manualClock } from '../health/fakes.js';
import { proseLines } from './markdown.js';
import { readRepoFile, repoPath } from './repo.js';

// ajv-formats is CommonJS whose module.exports is the plugin itself.
const addFormats = createRequire(import.meta.url)('ajv-formats') as (ajv: Ajv2020) => void;

/** The docs stay true to the code: every config key, every metric, every quoted message, every game's config. */

function keyPaths(node: Record<string, unknown>, path: string, out: Set<string>): Set<string> {
  const properties = node.properties as Record<string, Record<string, unknown>> | undefined;
  for (const [key, child] of Object.entries(properties ?? {})) {
    const full = path === '' ? key : `${path}.${key}`;
    out.add(full);
    keyPaths(child, full, out);
  }
  if (node.items && typeof node.items === 'object') keyPaths(node.items as Record<string, unknown>, `${path}[]`, out);
  for (const branch of [...((node.oneOf as unknown[]) ?? []), ...((node.anyOf as unknown[]) ?? [])])
    keyPaths(branch as Record<string, unknown>, path, out);
  return out;
}

function sourceText(dir: string): string {
  let text = '';
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) text += sourceText(path);
    // String literals split with `+` across lines are joined, so a message reads as printed.
    else if (entry.endsWith('.ts')) text += readFileSync(path, 'utf8').replace(/['`"]\s*\+\s*['`"]/g, '');
  }
  return text;
}

/** The ```json blocks of a Markdown text, parsed. */
function jsonBlocks(text: string): unknown[] {
  return [...text.matchAll(/^```json\n([\s\S]*?)^```$/gm)].map((block) => JSON.parse(block[1]!) as unknown);
}

/** The part of the JSON Schema that lists the executor types and the games. */
interface ServerSchemaPath {
  properties: {
    servers: {
      items: {
        properties: {
          executor: { oneOf: { properties: { type: { const: string } } }[] };
          players: { properties: { preset: { enum: string[] } } };
        };
      };
    };
  };
}

interface GameConfig {
  servers: { executor: { type: string }; players?: { preset?: string } }[];
}

describe('docs', () => {
  test('configuration.md documents every key of the schema', () => {
    const doc = readRepoFile('docs/configuration.md');
    const keys = [...keyPaths(configJsonSchema(), '', new Set())];
    // Sections (api, servers[].executor, …) are documented through their keys.
    const leaves = keys.filter((key) => !keys.some((other) => other.startsWith(`${key}.`) || other.startsWith(`${key}[]`)));
    assert.ok(leaves.includes('api.baseUrl') && leaves.includes('servers[].executor.host'));
    const missing = leaves.filter((key) => !doc.includes(`\`${key}\``));
    assert.deepEqual(missing, [], 'keys missing from docs/configuration.md');
  });

  test('operations.md lists exactly the porter_ metrics the registry has', async () => {
    const metrics = createMetrics({ clock: manualClock(), processMetrics: false });
    const registered = (await metrics.registry.getMetricsAsJSON()).map((m) => m.name).sort();
    const documented = [...new Set(readRepoFile('docs/operations.md').match(/`porter_[a-z_]+`/g) ?? [])].map((m) => m.slice(1, -1)).sort();
    assert.deepEqual(documented, registered);
  });

  test('operations.md gives each porter_ metric the labels it has, and names those without server', () => {
    const metrics = createMetrics({ clock: manualClock(), processMetrics: false });
    const doc = readRepoFile('docs/operations.md');
    const labels = new Map(
      metrics.registry.getMetricsAsArray().map((metric) => {
        const { name, labelNames } = metric as unknown as { name: string; labelNames?: string[] };
        return [name, [...(labelNames ?? [])].sort()];
      }),
    );
    for (const [name, has] of labels) {
      const row = new RegExp(`^\\| \`${name}\` \\| [a-z]+ \\|([^|]*)\\|`, 'm').exec(doc);
      assert.ok(row, `no table row for ${name}`);
      // Label names are the backticked words outside parentheses (inside them: the label's values).
      const documented = [...row[1]!.replace(/\([^)]*\)/g, '').matchAll(/`([a-z_]+)`/g)].map((m) => m[1]!).sort();
      assert.deepEqual(documented, has, `the labels of ${name}`);
    }
    const sentence = /have no `server` label:([^.]*)\./.exec(doc.replace(/\n/g, ' '));
    assert.ok(sentence, 'operations.md names the metrics without a server label');
    const named = [...sentence[1]!.matchAll(/`(porter_[a-z_]+)`/g)].map((m) => m[1]!).sort();
    const without = [...labels]
      .filter(([, has]) => !has.includes('server'))
      .map(([name]) => name)
      .sort();
    assert.deepEqual(named, without);
  });

  test("install.md's download lines name the files npm run release writes", () => {
    const { name } = JSON.parse(readRepoFile('package.json')) as { name: string };
    const install = readRepoFile('docs/install.md');
    // scripts/release/npm-package.mjs packs <name>-<version>.tgz; sea.mjs writes porter-<version>-linux-<arch>.
    assert.ok(install.includes(`"$BASE/${name}-$V.tgz"`), `install.md downloads ${name}-$V.tgz`);
    assert.ok(install.includes('"$BASE/porter-$V-linux-$ARCH"'), 'install.md downloads porter-$V-linux-$ARCH');
    assert.ok(install.includes('"$BASE/SHA256SUMS"') && install.includes('sha256sum -c'), 'and checks it against SHA256SUMS');
  });

  test('operations.md explains the three exit codes', () => {
    const doc = readRepoFile('docs/operations.md');
    for (const code of ['| 0 |', '| 78 |', '| 1 |']) assert.ok(doc.includes(code), code);
  });

  test('troubleshooting.md quotes messages porter really prints', () => {
    const doc = readRepoFile('docs/troubleshooting.md');
    const src = sourceText(repoPath('src'));
    const quoted = [
      ': unknown key (',
      'allowed keys here: ',
      'trailing comma before "}" is not allowed in JSON',
      '. Fix the file and try again.',
      'would send the API token unencrypted; use https://',
      'or under systemd LoadCredential=',
      'Seller API rejected the token (',
      'it is missing, wrong, revoked or was regenerated',
      'Seller API token lacks a scope (',
      'configuration or credentials rejected: fix the configuration and start again',
      'check servers[].id against the server list in the store dashboard',
      "the store's plan does not include API access (402): retrying every",
      'RCON password rejected; not reconnecting until the configuration is fixed',
      'fix "password" or "passwordFile" of this server',
      'in the config, or PORTER_RCON_PASSWORD, so that it matches the game server',
      'ended the connection during login (',
      'game server not reachable yet: nothing is pulled until it is; retrying with backoff',
      'check host and port, that RCON is enabled on the game server (Minecraft: enable-rcon=true)',
      'RCON reconnect failed; retrying with backoff',
      'is in use by another porter process (',
      'cannot write the delivery journal in',
      'check that the state directory is writable and the disk is not full',
      'not a regular file: remove it; porter creates the file itself',
      'porter will not guess which commands are still owed a report',
      'settle them from the store dashboard, then move the file away and start porter again',
      'executor not connected',
      'journal not writable',
      'cannot listen (',
      'lower api.budget.share to leave room for the official connector',
      'a command may be stuck PROCESSING on the platform until its own timeout',
    ];
    for (const fragment of quoted) {
      assert.ok(doc.includes(fragment), `troubleshooting.md should quote: ${fragment}`);
      const inSource = src.includes(fragment) || src.includes(fragment.replace(/'/g, "\\'"));
      assert.ok(inSource, `no longer printed by src/: ${fragment}`);
    }
  });

  test('games.md: a complete, valid config for every executor and every game', () => {
    const doc = readRepoFile('docs/games.md');
    const configs = jsonBlocks(doc) as GameConfig[];
    const ajv = new Ajv2020({ strict: true, allErrors: true });
    addFormats(ajv);
    const validate = ajv.compile(JSON.parse(readRepoFile('config.schema.json')) as object);
    configs.forEach((config, index) => {
      assert.equal(validate(config), true, `games.md config #${index + 1}: ${JSON.stringify(validate.errors)}`);
      const parsed = configSchema.safeParse(config);
      assert.equal(parsed.success, true, `games.md config #${index + 1}: ${parsed.error?.message ?? ''}`);
    });

    const server = configJsonSchema() as unknown as ServerSchemaPath;
    const { executor, players } = server.properties.servers.items.properties;
    const executors = executor.oneOf.map((branch) => branch.properties.type.const);
    const presets = players.properties.preset.enum;
    const servers = configs.flatMap((config) => config.servers);
    const usedPresets = new Set(servers.map((server) => server.players?.preset ?? 'none'));
    const usedExecutors = new Set(servers.map((server) => server.executor.type));
    assert.deepEqual(
      executors.filter((type) => !usedExecutors.has(type)),
      [],
      'executor types without a config in games.md',
    );
    assert.deepEqual(
      presets.filter((preset) => !usedPresets.has(preset)),
      [],
      'games without a config in games.md',
    );
  });

  test('games.md has a section for every game, and the README links each one', () => {
    const headings = proseLines(readRepoFile('docs/games.md')).filter((line) => line.startsWith('## '));
    const readme = readRepoFile('README.md');
    // Every game of the registry, so a game added there without its docs fails here.
    for (const game of new Set(Object.values(GAMES).map((entry) => entry.docsTitle))) {
      assert.ok(
        headings.some((heading) => heading.includes(game)),
        `games.md has no section for ${game}`,
      );
      assert.match(readme, new RegExp(`\\[${game}[^\\]]*\\]\\(docs/games\\.md#`), `README.md links no games.md section for ${game}`);
    }
  });
});
