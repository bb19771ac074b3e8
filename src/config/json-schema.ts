import { z } from 'zod';
import { configSchema } from './schema.js';

/**
 * The JSON Schema of the configuration file, generated from the zod schema so the two cannot
 * drift: editors use it for completion and validation through `"$schema"` in the config file.
 * `io: 'input'` describes the file as written, so keys with defaults are optional.
 */

/** Formats JSON Schema 2020-12 defines; zod also emits its own (e.g. "starts_with") that editors reject. */
const standardFormats = new Set([
  'date-time',
  'date',
  'time',
  'duration',
  'email',
  'idn-email',
  'hostname',
  'idn-hostname',
  'ipv4',
  'ipv6',
  'uri',
  'uri-reference',
  'iri',
  'iri-reference',
  'uuid',
  'uri-template',
  'json-pointer',
  'relative-json-pointer',
  'regex',
]);

export function configJsonSchema(): Record<string, unknown> {
  const generated = z.toJSONSchema(configSchema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  const { $schema, ...rest } = generated;
  return dropNonStandardFormats({
    $schema,
    title: 'porter configuration',
    description:
      'Configuration of porter, the delivery connector (porter run -c FILE). Generated from src/config/schema.ts by `npm run schema`; do not edit by hand.',
    ...rest,
  }) as Record<string, unknown>;
}

/** The exact text of the committed config.schema.json. */
export function renderConfigJsonSchema(): string {
  return `${JSON.stringify(configJsonSchema(), null, 2)}\n`;
}

function dropNonStandardFormats(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(dropNonStandardFormats);
  if (node === null || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === 'format' && typeof value === 'string' && !standardFormats.has(value)) continue;
    out[key] = dropNonStandardFormats(value);
  }
  return out;
}
