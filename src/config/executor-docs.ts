import { TRANSPORTS } from '../protocols/transport-registry.js';
import { executorJsonSchemas, type ExecutorJsonSchema } from './json-schema.js';

/**
 * The "Executors" section of docs/configuration.md, written from the transport list so a new
 * transport documents its keys by describing them in its schema, and no default in the docs can
 * drift from the code. `npm run schema` writes it between the markers; a test fails when it is stale.
 */
const EXECUTOR_DOCS_START = '<!-- executors: generated from src/protocols/<name>/descriptor.ts by `npm run schema`; do not edit -->';
const EXECUTOR_DOCS_END = '<!-- end of executors -->';

/** A default as the reader writes it in the file: strings bare, the rest as JSON. */
function shown(value: unknown): string {
  return `\`${typeof value === 'string' ? value : JSON.stringify(value)}\``;
}

/** A text as one table cell: a `|` in it would end the cell. */
function cell(text: string): string {
  return text.replaceAll('|', '\\|');
}

function row(key: string, property: ExecutorJsonSchema['properties'][string], required: boolean, type: string): string {
  // A key without a description is a schema bug test/ship/config-schema.test.ts names; the section stays renderable.
  const meaning = key === 'type' ? `\`${type}\`` : cell(property.description ?? '');
  const fallback = required ? 'required' : '—';
  return `| \`servers[].executor.${key}\` | ${'default' in property ? shown(property.default) : fallback} | ${meaning} |`;
}

function section(transport: (typeof TRANSPORTS)[number], schema: ExecutorJsonSchema): string {
  const required = new Set(schema.required ?? []);
  const note = 'defaultPresetNote' in transport ? transport.defaultPresetNote : '';
  return [
    `### \`${transport.type}\``,
    '',
    `${cell(schema.description ?? '')} Default \`players.preset\`: \`${transport.defaultPreset}\`${note}.`,
    '',
    '| key | default | meaning |',
    '|---|---|---|',
    ...Object.entries(schema.properties).map(([key, property]) => row(key, property, required.has(key), transport.type)),
  ].join('\n');
}

/** The section's text between the markers, markers included. */
function renderExecutorDocs(): string {
  const schemas = executorJsonSchemas();
  // The union lists the transports in TRANSPORTS' order: section i is transport i's.
  const sections = TRANSPORTS.map((transport, index) => {
    const schema = schemas[index];
    if (schema?.properties.type?.const !== transport.type)
      throw new Error(`the executor union does not list ${transport.type} at ${index}`);
    return section(transport, schema);
  });
  return [EXECUTOR_DOCS_START, '', sections.join('\n\n'), '', EXECUTOR_DOCS_END].join('\n');
}

/** The document with its section replaced by the current one. */
export function withExecutorDocs(doc: string): string {
  const start = doc.indexOf(EXECUTOR_DOCS_START);
  const end = doc.indexOf(EXECUTOR_DOCS_END);
  if (start < 0 || end < start)
    throw new Error(`docs/configuration.md has lost its markers; put back ${EXECUTOR_DOCS_START} and ${EXECUTOR_DOCS_END}`);
  return doc.slice(0, start) + renderExecutorDocs() + doc.slice(end + EXECUTOR_DOCS_END.length);
}
