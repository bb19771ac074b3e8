import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import ts from 'typescript';

/**
 * Operators alert and search on a log line's `event` (docs/operations.md#log-events), so every
 * line porter writes must carry one, spelled where the call is (a name assembled at run time
 * could not be searched for in the source), and the table in operations.md must name exactly the
 * events the source writes, at the levels it writes them.
 *
 * A logger call is found by its shape: `<…>.log.<level>(…)` or `<…>.logger.<level>(…)` (any
 * receiver whose last name ends in "log" or "logger", `this.#log` too), which is how every module
 * here holds its pino logger; @clack/prompts' `clack.log` prints prompts, not log lines.
 */

const root = fileURLToPath(new URL('../../../', import.meta.url));
const LEVELS = new Set(['trace', 'debug', 'info', 'warn', 'error', 'fatal']);
const EVENT_NAME = /^[a-z][a-z0-9]*(\.[a-z][a-z0-9]*)+$/;

interface Call {
  readonly where: string;
  readonly level: string;
  /** The event's name, or why the call has none. */
  readonly event: { readonly name: string } | { readonly problem: string };
  /** The names of the fields the call writes, where the source spells them (spreads of a local object literal included). */
  readonly fields: readonly string[];
  /** The fields whose value is an error's message (`messageOf(…)`, `….message`). */
  readonly errorMessages: readonly string[];
}

/** A child logger's bindings: fields every line of that logger carries. */
interface Binding {
  readonly where: string;
  readonly fields: readonly string[];
}

/**
 * One name per thing a log line can carry: what operators search and alert on must not be `id`
 * in one event and `commandId` in the next. A field listed as an alias is the same thing spelled
 * another way; docs/operations.md#log-fields lists the canonical ones and says what each holds.
 */
const FIELDS: ReadonlyArray<{ readonly field: string; readonly aliases: readonly string[] }> = [
  { field: 'id', aliases: ['commandId', 'command_id', 'cmdId'] },
  { field: 'server', aliases: ['serverId', 'server_id', 'serverName', 'serverLabel'] },
  { field: 'store', aliases: ['storeId', 'storeName', 'storeLabel'] },
  { field: 'address', aliases: ['rcon', 'webrcon', 'battleye', 'telnet', 'tshock'] },
  { field: 'err', aliases: ['error', 'errMessage', 'errorMessage'] },
  { field: 'reason', aliases: ['why', 'problem', 'because', 'lostBecause'] },
  { field: 'exitCode', aliases: ['exitStatus'] },
  { field: 'status', aliases: ['httpStatus', 'statusCode'] },
  { field: 'packetId', aliases: ['rconId', 'requestId'] },
  { field: 'connection', aliases: ['client', 'session'] },
  { field: 'retryInMs', aliases: ['retryMs', 'backoffMs'] },
  { field: 'ms', aliases: ['durationMs', 'elapsedMs', 'tookMs'] },
];

function* sourceFiles(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* sourceFiles(path);
    else if (entry.name.endsWith('.ts')) yield path;
  }
}

/** A receiver whose last name ends in "log" or "logger" (`this.#log` too). */
function isLogger(receiver: ts.Expression): boolean {
  const last = ts.isPropertyAccessExpression(receiver) ? receiver.name.text : ts.isIdentifier(receiver) ? receiver.text : '';
  return /(log|logger)$/i.test(last.replace(/^#/, ''));
}

function isLoggerCall(node: ts.CallExpression): node is ts.CallExpression & { expression: ts.PropertyAccessExpression } {
  const callee = node.expression;
  if (!ts.isPropertyAccessExpression(callee) || !LEVELS.has(callee.name.text)) return false;
  return isLogger(callee.expression) && callee.expression.getText() !== 'clack.log';
}

/** `logger[level](…)`: a level chosen at run time, which hides the call's event from this scan. */
function isComputedLevelCall(node: ts.CallExpression): boolean {
  const callee = node.expression;
  return ts.isElementAccessExpression(callee) && isLogger(callee.expression);
}

/** The property names of an object literal, following spreads of a `const x = { … }` in the same file. */
function fieldsOf(node: ts.Expression | undefined, source: ts.SourceFile): string[] {
  if (node === undefined || !ts.isObjectLiteralExpression(node)) return [];
  return node.properties.flatMap((p) => {
    if (ts.isSpreadAssignment(p)) return ts.isIdentifier(p.expression) ? fieldsOf(localObject(p.expression.text, source), source) : [];
    return p.name !== undefined && (ts.isIdentifier(p.name) || ts.isStringLiteral(p.name)) ? [p.name.text] : [];
  });
}

function errorMessagesOf(node: ts.Expression | undefined): string[] {
  if (node === undefined || !ts.isObjectLiteralExpression(node)) return [];
  return node.properties.flatMap((p) =>
    ts.isPropertyAssignment(p) &&
    ts.isIdentifier(p.name) &&
    !ts.isStringLiteral(p.initializer) &&
    /\bmessageOf\(|\.message\b/.test(p.initializer.getText())
      ? [p.name.text]
      : [],
  );
}

function localObject(name: string, source: ts.SourceFile): ts.Expression | undefined {
  let found: ts.Expression | undefined;
  const visit = (node: ts.Node): void => {
    if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name) && node.name.text === name && node.initializer) {
      found ??= node.initializer;
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** `<…>.logger.child({ … })`: the bindings a logger puts on every line it writes. */
function isChildCall(node: ts.CallExpression): boolean {
  const callee = node.expression;
  return ts.isPropertyAccessExpression(callee) && callee.name.text === 'child' && isLogger(callee.expression);
}

function eventOf(call: ts.CallExpression): Call['event'] {
  const [fields] = call.arguments;
  if (call.arguments.length < 2 || fields === undefined || !ts.isObjectLiteralExpression(fields)) {
    return { problem: 'its first argument is not an object literal holding the event' };
  }
  const property = fields.properties.find(
    (p): p is ts.PropertyAssignment => ts.isPropertyAssignment(p) && ts.isIdentifier(p.name) && p.name.text === 'event',
  );
  if (property === undefined) return { problem: 'it has no event' };
  if (!ts.isStringLiteral(property.initializer)) return { problem: 'its event is not a string literal' };
  const name = property.initializer.text;
  return EVENT_NAME.test(name) ? { name } : { problem: `its event "${name}" is not lowercase and dotted (area.what)` };
}

function loggerCalls(bindings: Binding[] = []): Call[] {
  const calls: Call[] = [];
  for (const file of sourceFiles(join(root, 'src'))) {
    const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
    const visit = (node: ts.Node): void => {
      if (ts.isCallExpression(node) && isLoggerCall(node)) {
        const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
        const fields = fieldsOf(node.arguments[0], source).filter((field) => field !== 'event');
        const errorMessages = errorMessagesOf(node.arguments[0]);
        calls.push({
          where: `${relative(root, file)}:${line}`,
          level: node.expression.name.text,
          event: eventOf(node),
          fields,
          errorMessages,
        });
      } else if (ts.isCallExpression(node) && isComputedLevelCall(node)) {
        const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
        calls.push({
          where: `${relative(root, file)}:${line}`,
          level: 'computed',
          event: { problem: 'its level is computed (logger[level]): write one call per level, each with its event' },
          fields: [],
          errorMessages: [],
        });
      } else if (ts.isCallExpression(node) && isChildCall(node)) {
        const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
        bindings.push({ where: `${relative(root, file)}:${line}`, fields: fieldsOf(node.arguments[0], source) });
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return calls;
}

/** The rows of the table under "## Log events": event name → its levels as the table lists them. */
function documentedEvents(): Map<string, string[]> {
  const text = readFileSync(join(root, 'docs/operations.md'), 'utf8');
  const section = /^## Log events\n([\s\S]*?)(?=^## )/m.exec(text)?.[1];
  assert.ok(section, 'docs/operations.md has a "## Log events" section');
  const rows = new Map<string, string[]>();
  for (const match of section.matchAll(/^\| `([^`]+)` \| ([^|]+) \|/gm)) {
    assert.ok(!rows.has(match[1]!), `docs/operations.md lists ${match[1]} twice`);
    rows.set(
      match[1]!,
      match[2]!.split(',').map((level) => level.trim()),
    );
  }
  return rows;
}

describe('log events', () => {
  const bindings: Binding[] = [];
  const calls = loggerCalls(bindings);

  test('the scan finds porter’s log calls (a scan that found none would pass everything)', () => {
    assert.ok(calls.length >= 100, `found ${calls.length} logger calls`);
    assert.ok(calls.some((call) => call.where.startsWith('src/delivery/loop.ts')));
  });

  test('every log line porter writes names its event, a literal, lowercase and dotted', () => {
    const missing = calls.flatMap((call) => ('problem' in call.event ? [`${call.where}: ${call.event.problem}`] : []));
    assert.deepEqual(missing, []);
  });

  test('docs/operations.md lists exactly the events the source writes, each at the levels it is written', () => {
    const written = new Map<string, Set<string>>();
    for (const call of calls) {
      if (!('name' in call.event)) continue;
      const levels = written.get(call.event.name) ?? new Set<string>();
      written.set(call.event.name, levels.add(call.level));
    }
    const documented = documentedEvents();
    const undocumented = [...written.keys()].filter((name) => !documented.has(name));
    const unwritten = [...documented.keys()].filter((name) => !written.has(name));
    assert.deepEqual({ undocumented, unwritten }, { undocumented: [], unwritten: [] });
    const order = [...LEVELS];
    for (const [name, levels] of written) {
      const expected = [...levels].sort((a, b) => order.indexOf(a) - order.indexOf(b));
      assert.deepEqual(documented.get(name), expected, `the levels docs/operations.md gives ${name}`);
    }
  });

  test('no fact is logged twice by two layers: no event is another event with an area put in front', () => {
    // api.report.settled and report.settled were one 404/409 logged by the API layer and again by
    // the reporter that acts on it; the layer that decides what happens next logs it, once.
    const names = new Set(calls.flatMap((call) => ('name' in call.event ? [call.event.name] : [])));
    const twice = [...names].flatMap((name) =>
      [...names].filter((other) => other.endsWith(`.${name}`)).map((other) => `${other} and ${name}`),
    );
    assert.deepEqual(twice, []);
  });

  test('the scan sees the fields of log calls and child loggers (a scan that saw none would pass everything)', () => {
    assert.ok(
      calls.some((call) => call.fields.includes('id') && call.fields.includes('outcome')),
      'delivery.done through its spread line',
    );
    assert.ok(
      bindings.some((binding) => binding.fields.includes('server')),
      "the per-server logger's binding",
    );
  });

  test('one field name per thing: no log line or child logger spells a canonical field another way', () => {
    const canonical = new Map(FIELDS.flatMap(({ field, aliases }) => aliases.map((alias) => [alias, field] as const)));
    const written = [...calls, ...bindings].flatMap(({ where, fields }) =>
      fields.flatMap((field) => {
        const instead = canonical.get(field);
        return instead === undefined ? [] : [`${where}: ${field} (write ${instead})`];
      }),
    );
    assert.deepEqual(written, []);
  });

  test('docs/operations.md#log-fields lists exactly the canonical fields', () => {
    const text = readFileSync(join(root, 'docs/operations.md'), 'utf8');
    const section = /^## Log fields\n([\s\S]*?)(?=^## )/m.exec(text)?.[1];
    assert.ok(section, 'docs/operations.md has a "## Log fields" section');
    const documented = [...section.matchAll(/^\| `([^`]+)` \|/gm)].map((match) => match[1]);
    assert.deepEqual(
      documented,
      FIELDS.map(({ field }) => field),
    );
  });

  test('an event is written from one file: a fact shared by several modules is logged where they share code', () => {
    // Each of these is written by paths that never both run for one fact: porter.stopped by the
    // daemon and by a stop before it started, players.cut by the daemon and by `porter players`,
    // config.warning by each kind of start, a fake.* by each simulated server.
    const several = new Set(['config.warning', 'porter.stopped', 'players.cut']);
    const files = new Map<string, Set<string>>();
    for (const call of calls) {
      if (!('name' in call.event) || several.has(call.event.name) || call.event.name.startsWith('fake.')) continue;
      const file = call.where.replace(/:\d+$/, '');
      files.set(call.event.name, (files.get(call.event.name) ?? new Set()).add(file));
    }
    const spread = [...files].filter(([, where]) => where.size > 1).map(([name, where]) => `${name}: ${[...where].join(', ')}`);
    assert.deepEqual(spread, []);
  });

  test("a field written straight from an error's message is err, whatever the event", () => {
    assert.ok(
      calls.some((call) => call.errorMessages.includes('err')),
      'the scan sees err: messageOf(error) (a scan that saw none would pass everything)',
    );
    const misnamed = calls.flatMap((call) =>
      call.errorMessages.filter((field) => field !== 'err').map((field) => `${call.where}: ${field} holds an error's message (write err)`),
    );
    assert.deepEqual(misnamed, []);
  });
});
