// Writes config.schema.json from the compiled zod schema. Run through `npm run schema`
// (which compiles first); test/ship/config-schema.test.ts fails when the committed file is stale.
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { renderConfigJsonSchema } from '../dist/src/config/json-schema.js';

const target = fileURLToPath(new URL('../config.schema.json', import.meta.url));
writeFileSync(target, renderConfigJsonSchema());
process.stdout.write(`wrote ${target}\n`);
