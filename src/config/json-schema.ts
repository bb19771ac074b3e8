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

/** One transport's `executor` section as the JSON Schema describes it. */
export interface ExecutorJsonSchema {
  readonly description?: string;
  readonly properties: Readonly<Record<string, { readonly const?: unknown; readonly default?: unknown; readonly description?: string }>>;
  readonly required?: readonly string[];
}

/** The schema's union of `executor` sections, one per transport in the transport list's order: what an editor shows of each. */
export function executorJsonSchemas(): readonly ExecutorJsonSchema[] {
  const { servers } = configJsonSchema().properties as {
    servers: { items: { properties: { executor: { oneOf: ExecutorJsonSchema[] } } } };
  };
  return servers.items.properties.executor.oneOf;
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
