import type { z } from 'zod';

/**
 * Turns zod issues into one line each, naming the key the way a user writes it
 * (`servers[0].executor.port`) and what was expected. Values from the file are never echoed: the
 * offending key may hold a secret.
 */

type Key = PropertyKey;

export function formatKeyPath(path: readonly Key[]): string {
  let out = '';
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    // A store name (`stores.eu-network.token`) is written plainly too: it is how the docs and messages name it.
    else if (typeof key === 'string' && /^[A-Za-z_$][\w$]*$|^[a-z0-9][a-z0-9-]*$/.test(key)) out += out === '' ? key : `.${key}`;
    else out += `[${JSON.stringify(String(key))}]`;
  }
  return out === '' ? '(top level)' : out;
}

function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  switch (typeof value) {
    case 'string':
      return 'a string';
    case 'number':
      return Number.isInteger(value) ? 'a whole number' : 'a fractional number';
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object':
      return 'an object';
    default:
      return typeof value;
  }
}

const expectedNames: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  int: 'a whole number',
  boolean: 'true or false',
  object: 'an object { ... }',
  array: 'a list [ ... ]',
  null: 'null',
};

function quoteAll(values: readonly unknown[]): string {
  const quoted = values.map((v) => JSON.stringify(v));
  return quoted.length === 1 ? (quoted[0] as string) : `one of ${quoted.join(', ')}`;
}

function bound(issue: { origin?: string; inclusive?: boolean }, value: number | bigint, small: boolean): string {
  const n = Number(value);
  switch (issue.origin) {
    case 'string':
      if (small && n === 1) return 'must not be empty';
      return small ? `expected at least ${n} characters` : `expected at most ${n} characters`;
    case 'array':
      if (small && n === 1) return 'expected at least one entry';
      return small ? `expected at least ${n} entries` : `expected at most ${n} entries`;
    default:
      if (small && n === 0 && issue.inclusive === false) return 'expected a number greater than 0';
      return `expected a number ${small ? (issue.inclusive === false ? 'greater than' : 'of at least') : issue.inclusive === false ? 'less than' : 'of at most'} ${n}`;
  }
}

/**
 * Per-parse error map: it only supplies the messages the schema does not set itself, because zod
 * lets a schema's own `error`/`message` win over this one.
 */
export const configErrorMap: z.core.$ZodErrorMap = (issue) => {
  switch (issue.code) {
    case 'invalid_type': {
      const expected = expectedNames[issue.expected] ?? issue.expected;
      if (issue.input === undefined) return `missing: expected ${expected}`;
      return `expected ${expected}, got ${describeValue(issue.input)}`;
    }
    case 'too_small':
      return bound(issue, issue.minimum, true);
    case 'too_big':
      return bound(issue, issue.maximum, false);
    case 'invalid_value':
      return `expected ${quoteAll(issue.values)}`;
    case 'invalid_format':
      return `not a valid ${issue.format}`;
    case 'not_multiple_of':
      return `expected a multiple of ${Number(issue.divisor)}`;
    default:
      return undefined;
  }
};

/** What the schema expects at `path`, walking the data alongside to pick the branch of a union. */
interface Def {
  type: string;
  shape?: Record<string, { _zod: { def: Def } }>;
  element?: { _zod: { def: Def } };
  /** A record's values (`stores.<name>`). */
  valueType?: { _zod: { def: Def } };
  innerType?: { _zod: { def: Def } };
  in?: { _zod: { def: Def } };
  options?: { _zod: { def: Def } }[];
  discriminator?: string;
  /** A literal's allowed values. */
  values?: unknown[];
}

function unwrap(def: Def): Def {
  let current = def;
  for (;;) {
    if (current.innerType) current = current.innerType._zod.def;
    else if (current.type === 'pipe' && current.in) current = current.in._zod.def;
    else return current;
  }
}

function objectKeysAt(schema: z.ZodType, path: readonly Key[], data: unknown): string[] {
  let def: Def | undefined = unwrap((schema as unknown as { _zod: { def: Def } })._zod.def);
  let value: unknown = data;
  const pick = (d: Def): Def | undefined => {
    if (d.type !== 'union' || !d.options) return d;
    const objects = d.options.map((o) => unwrap(o._zod.def)).filter((o) => o.type === 'object');
    if (d.discriminator && value && typeof value === 'object') {
      const wanted = (value as Record<string, unknown>)[d.discriminator];
      const match = objects.find((o) => {
        const literal = o.shape?.[d.discriminator as string]?._zod.def;
        return literal?.values?.includes(wanted);
      });
      if (match) return match;
    }
    return objects.length === 1 ? objects[0] : undefined;
  };
  for (const key of path) {
    def = def && pick(def);
    if (!def) return [];
    if (def.type === 'object' && typeof key === 'string') def = def.shape?.[key] && unwrap(def.shape[key]._zod.def);
    else if (def.type === 'array' && typeof key === 'number') def = def.element && unwrap(def.element._zod.def);
    else if (def.type === 'record' && typeof key === 'string') def = def.valueType && unwrap(def.valueType._zod.def);
    else return [];
    value = value && typeof value === 'object' ? (value as Record<Key, unknown>)[key] : undefined;
  }
  def = def && pick(def);
  return def?.type === 'object' && def.shape ? Object.keys(def.shape) : [];
}

function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let diagonal = row[0] as number;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const above = row[j] as number;
      row[j] = Math.min(above + 1, (row[j - 1] as number) + 1, diagonal + (a[i - 1] === b[j - 1] ? 0 : 1));
      diagonal = above;
    }
  }
  return row[b.length] as number;
}

function closestKey(key: string, known: readonly string[]): string | undefined {
  const lower = key.toLowerCase();
  let best: { name: string; d: number } | undefined;
  for (const name of known) {
    const d = name.toLowerCase() === lower ? 0 : distance(lower, name.toLowerCase());
    if (d <= Math.max(1, Math.floor(name.length / 4)) && (!best || d < best.d)) best = { name, d };
  }
  return best?.name;
}

function valueAt(data: unknown, path: readonly Key[]): unknown {
  let value = data;
  for (const key of path) {
    if (!value || typeof value !== 'object') return undefined;
    value = (value as Record<Key, unknown>)[key];
  }
  return value;
}

/** One line per problem, unknown keys one line each, in the order zod found them. */
export function describeIssues(issues: readonly z.core.$ZodIssue[], schema: z.ZodType, data: unknown): string[] {
  const lines: string[] = [];
  for (const issue of issues) {
    const path = issue.path;
    if (issue.code === 'unrecognized_keys') {
      const known = objectKeysAt(schema, path, data);
      for (const key of issue.keys) {
        const suggestion = closestKey(key, known);
        const hint = suggestion
          ? `did you mean "${suggestion}"?`
          : known.length > 0
            ? `allowed keys here: ${known.join(', ')}`
            : 'remove it';
        lines.push(`${formatKeyPath([...path, key])}: unknown key (${hint})`);
      }
      continue;
    }
    if (issue.code === 'invalid_key') {
      // A record's key (a store name) that its key schema refused: the key schema's own words.
      const inner = issue.issues.map((problem) => problem.message);
      lines.push(`${formatKeyPath(path)}: ${inner.length > 0 ? inner.join('; ') : issue.message}`);
      continue;
    }
    if (issue.code === 'invalid_union' && 'discriminator' in issue && issue.discriminator) {
      const options = (issue as { options?: unknown[] }).options ?? [];
      const missing = valueAt(data, path) === undefined;
      lines.push(`${formatKeyPath(path)}: ${missing ? 'missing: expected' : 'expected'} ${quoteAll(options)}`);
      continue;
    }
    if (issue.code === 'invalid_union') {
      const alternatives = issue.errors
        .map((branch) => branch[0])
        .filter((first): first is z.core.$ZodIssue => first !== undefined)
        .map((first) => (first.path.length > 0 ? `${formatKeyPath(first.path)} ${first.message}` : first.message));
      lines.push(
        `${formatKeyPath(path)}: does not match any allowed form${alternatives.length > 0 ? ` (${alternatives.join('; or ')})` : ''}`,
      );
      continue;
    }
    lines.push(`${formatKeyPath(path)}: ${issue.message}`);
  }
  return lines;
}
