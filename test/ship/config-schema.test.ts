import { createRequire } from 'node:module';
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { withExecutorDocs } from '../../src/config/executor-docs.js';
import { withPresetDocs } from '../../src/config/preset-docs.js';
import { configJsonSchema, executorJsonSchemas, renderConfigJsonSchema } from '../../src/config/json-schema.js';
import { TRANSPORTS } from '../../src/protocols/transport-registry.js';
import { configSchema } from '../../src/config/schema.js';
import { readRepoFile } from './repo.js';

// ajv-formats is CommonJS whose module.exports is the plugin itself.
const addFormats = createRequire(import.meta.url)('ajv-formats') as (ajv: Ajv2020) => void;

function compile() {
  const ajv = new Ajv2020({ strict: true, allErrors: true });
  addFormats(ajv);
  return ajv.compile(JSON.parse(readRepoFile('config.schema.json')) as object);
}

describe('config.schema.json', () => {
  test('the committed file is what the zod schema generates (run `npm run schema` when this fails)', () => {
    assert.equal(readRepoFile('config.schema.json'), renderConfigJsonSchema());
  });

  test("configuration.md's Executors section is what the transports' schemas generate (run `npm run schema` when this fails)", () => {
    const doc = readRepoFile('docs/configuration.md');
    assert.equal(doc, withExecutorDocs(doc));
  });

  test("configuration.md's players.preset row lists every game of the registry (run `npm run schema` when this fails)", () => {
    const doc = readRepoFile('docs/configuration.md');
    assert.equal(doc, withPresetDocs(doc));
    assert.throws(() => withPresetDocs('no such row'), /players\.preset/);
  });

  test('every key of every executor says what it is, in the editor and in the docs', () => {
    const union = executorJsonSchemas();
    assert.equal(union.length, TRANSPORTS.length, 'one schema per transport');
    for (const member of union) {
      const type = String(member.properties.type?.const);
      assert.ok(member.description, `executor ${type} has no description`);
      const bare = Object.entries(member.properties).filter(([key, property]) => key !== 'type' && !property.description);
      assert.deepEqual(
        bare.map(([key]) => key),
        [],
        `executor ${type}: keys without a description`,
      );
    }
  });

  test('is valid JSON Schema 2020-12 in ajv strict mode (no zod-only keywords or formats)', () => {
    assert.doesNotThrow(() => compile());
  });

  test('config.example.json points at it and validates against it', () => {
    const example = JSON.parse(readRepoFile('config.example.json')) as Record<string, unknown>;
    assert.equal(example.$schema, './config.schema.json');
    const validate = compile();
    assert.equal(validate(example), true, JSON.stringify(validate.errors));
    assert.equal(configSchema.safeParse(example).success, true, 'zod accepts the example too');
  });

  test('keys with defaults are optional, unknown keys are rejected, as zod does', () => {
    const validate = compile();
    const minimal = {
      api: { baseUrl: 'https://seller.example.com' },
      servers: [{ id: '1b4e28ba-2fa1-11d2-883f-0016d3cca427', executor: { type: 'rcon' } }],
    };
    assert.equal(validate(minimal), true, JSON.stringify(validate.errors));
    assert.equal(configSchema.safeParse(minimal).success, true);

    const typo = { ...minimal, pol: { idleMs: 1000 } };
    assert.equal(validate(typo), false);
    assert.equal(configSchema.safeParse(typo).success, false);

    const badExecutor = { ...minimal, servers: [{ ...minimal.servers[0], executor: { type: 'ftp' } }] };
    assert.equal(validate(badExecutor), false);
  });

  test('carries the descriptions written in the zod schema', () => {
    const text = JSON.stringify(configJsonSchema());
    assert.match(text, /Fraction of the per-window budget porter may spend/);
    assert.doesNotMatch(text, /"format":"starts_with"/);
  });
});
