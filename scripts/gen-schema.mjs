// Writes config.schema.json, and the Executors section and the preset row of docs/configuration.md, from the compiled
// zod schema. Run through `npm run schema` (which compiles first); test/ship/config-schema.test.ts
// fails when any committed text is stale.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { withExecutorDocs } from '../dist/src/config/executor-docs.js';
import { renderConfigJsonSchema } from '../dist/src/config/json-schema.js';
import { withPresetDocs } from '../dist/src/config/preset-docs.js';

const schemaFile = fileURLToPath(new URL('../config.schema.json', import.meta.url));
writeFileSync(schemaFile, renderConfigJsonSchema());
process.stdout.write(`wrote ${schemaFile}\n`);

const docsFile = fileURLToPath(new URL('../docs/configuration.md', import.meta.url));
writeFileSync(docsFile, withPresetDocs(withExecutorDocs(readFileSync(docsFile, 'utf8'))));
process.stdout.write(`wrote the Executors section and the preset row of ${docsFile}\n`);
