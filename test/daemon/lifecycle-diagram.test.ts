import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { pino } from 'pino';
import type { ServerParts } from '../../src/daemon/build-server.js';
import { DAEMON_MOVES, DaemonLifecycle } from '../../src/daemon/lifecycle.js';
import { RUNNER_MOVES } from '../../src/daemon/runner-state.js';
import { ServerRunner } from '../../src/daemon/server-runner.js';
import type { Moves } from '../../src/daemon/state-table.js';
import { FakeClock } from '../helpers/fake-clock.js';

/**
 * The state diagrams of docs/design.md#lifecycle are the tables the code moves by: every arrow a
 * move of DAEMON_MOVES or RUNNER_MOVES and every move an arrow, the start arrow at the state the
 * code starts in, and the end arrow from each state with no move out. Neither can change alone.
 */

const design = readFileSync(fileURLToPath(new URL('../../../docs/design.md', import.meta.url)), 'utf8');

interface Diagram {
  /** "from → to", states named as the code names them. */
  readonly moves: ReadonlySet<string>;
  readonly initial: readonly string[];
  readonly final: readonly string[];
}

/** The mermaid stateDiagram under a heading: `state "logging in" as logging_in` names a state the code calls logging-in. */
function diagramUnder(heading: string): Diagram {
  const section = design.slice(design.indexOf(`\n${heading}\n`));
  const block = /```mermaid\n([\s\S]*?)```/.exec(section);
  assert.ok(block?.[1], `docs/design.md has a mermaid diagram under "${heading}"`);
  const names = new Map<string, string>();
  const moves = new Set<string>();
  const initial: string[] = [];
  const final: string[] = [];
  for (const line of block[1].split('\n').map((l) => l.trim())) {
    const alias = /^state "([^"]+)" as (\w+)$/.exec(line);
    if (alias) names.set(alias[2]!, alias[1]!.replaceAll(' ', '-'));
    const arrow = /^(\[\*\]|\w+) --> (\[\*\]|\w+)(?:\s*:.*)?$/.exec(line);
    if (!arrow) continue;
    const [from, to] = [arrow[1]!, arrow[2]!].map((id) => names.get(id) ?? id) as [string, string];
    if (from === '[*]') initial.push(to);
    else if (to === '[*]') final.push(from);
    else moves.add(`${from} → ${to}`);
  }
  return { moves, initial, final };
}

function tableOf<S extends string>(table: Moves<S>, initial: S): Diagram {
  const states = Object.keys(table) as S[];
  return {
    moves: new Set(states.flatMap((from) => table[from].map((to) => `${from} → ${to}`))),
    initial: [initial],
    final: states.filter((state) => table[state].length === 0),
  };
}

test("the daemon's diagram is DAEMON_MOVES, from the state a daemon starts in", () => {
  const starts = new DaemonLifecycle(pino({ level: 'silent' }), { shutdownMs: () => 0, actions: { drain: () => {}, force: () => {} } })
    .state;
  assert.deepEqual(diagramUnder('### The daemon'), tableOf(DAEMON_MOVES, starts));
});

test("a runner's diagram is RUNNER_MOVES, from the state a runner starts in", () => {
  const parts = { server: { id: 's1' } } as unknown as ServerParts;
  const starts = new ServerRunner(parts, { logger: pino({ level: 'silent' }), clock: new FakeClock() }).state;
  assert.deepEqual(diagramUnder("### One server's runner"), tableOf(RUNNER_MOVES, starts));
});
