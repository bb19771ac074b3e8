import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Terminal } from '../helpers/tmux.js';
import { waitFor } from '../helpers/wait-for.js';
import { missingTool } from '../ship/run.js';
import { CLI, isSettled, SIM_SERVER_ID, startBed, WAIT } from './harness.js';

/**
 * What an owner sees in a terminal (tmux): `porter check` and `porter rcon` print their own lines
 * with no pretty log line (`[21:38:03.119] ERROR: …`) among them, and `porter run` says each
 * delivery in one line, not one line per field, coloured unless NO_COLOR says otherwise.
 */

const PRETTY_LOG_LINE = /^\[\d\d:\d\d:\d\d(\.\d+)?\] [A-Z]+:/m;

/** A colour in tmux's `capture-pane -e`: an SGR sequence with a foreground or background colour (30–49, 90–107). */
// eslint-disable-next-line no-control-regex -- the escape is the point
const COLOUR = /\u001b\[(?:\d+;)*(?:3\d|4\d|9\d|10\d)(?:;\d+)*m/;

async function ended(terminal: Terminal): Promise<number> {
  await waitFor(() => terminal.exitStatus() !== undefined, { ...WAIT, what: 'porter to end' });
  return terminal.exitStatus()!;
}

const skip = missingTool('tmux', 'apt-get install tmux');

describe('the first hour in a terminal', { skip }, () => {
  test('porter check and porter rcon with a wrong RCON password: their own lines, no log line among them', async () => {
    const bed = await startBed();
    try {
      bed.writeConfig((config) => {
        config.servers[0]!.executor.password = 'not-the-password-71';
        delete config.log.pretty;
      });
      const check = new Terminal([CLI, 'check', '-c', bed.configPath], {}, bed.dir);
      try {
        assert.equal(await ended(check), 78, check.screen());
        const screen = check.screen();
        assert.match(screen, /✖ server itest: the RCON password was rejected/);
        assert.match(screen, /✔ API token accepted/);
        assert.doesNotMatch(screen, PRETTY_LOG_LINE);
        assert.doesNotMatch(screen, /"level"/);
      } finally {
        check.close();
      }
      const rcon = new Terminal([CLI, 'rcon', '-c', bed.configPath, 'list'], {}, bed.dir);
      try {
        assert.equal(await ended(rcon), 78, rcon.screen());
        const screen = rcon.screen();
        assert.match(screen, /porter: E_CREDENTIALS: the RCON password was rejected/);
        assert.doesNotMatch(screen, PRETTY_LOG_LINE);
        assert.doesNotMatch(screen, /not reconnecting/, 'a daemon line, not what a one-shot command says');
      } finally {
        rcon.close();
      }
    } finally {
      await bed.close();
    }
  });

  test('porter run on a terminal: one line per delivery, with the server, command, id, outcome and time', async () => {
    const bed = await startBed();
    try {
      bed.writeConfig((config) => {
        delete config.log.pretty;
      });
      const done = bed.api.enqueue(SIM_SERVER_ID, { command: 'give Steve diamond 1', player: 'Steve', offlineExecute: false });
      const failed = bed.api.enqueue(SIM_SERVER_ID, { command: 'give Notch diamond 1', offlineExecute: true });
      const run = new Terminal([CLI, 'run', '-c', bed.configPath], {}, bed.dir);
      try {
        const status = (id: string) => bed.api.commands().find((c) => c.id === id)?.status ?? '';
        await waitFor(() => isSettled(status(done)) && isSettled(status(failed)), { ...WAIT, what: 'both deliveries' });
        const screen = await run.waitFor(/delivery failed/, 'the failed delivery on the screen');
        const lines = screen.split('\n');
        const delivered = lines.filter((line) => / delivered /.test(line));
        assert.equal(delivered.length, 1, screen);
        assert.match(delivered[0]!, new RegExp(`INFO: itest: delivered "give Steve diamond 1" \\(id ${done}, done, \\d+ ms\\)$`));
        const failedLine = lines.find((line) => /delivery failed/.test(line)) ?? '';
        assert.match(failedLine, new RegExp(`WARN: itest: delivery failed "give Notch diamond 1" \\(id ${failed}, failed, \\d+ ms\\): `));
        assert.ok(!lines.some((line) => /^\s+(server|id|outcome|ms|command): /.test(line)), `a field on a line of its own:\n${screen}`);
      } finally {
        run.press('C-c');
        await ended(run).catch(() => undefined);
        run.close();
      }
    } finally {
      await bed.close();
    }
  });
  test('NO_COLOR: porter run and porter demo colour nothing on a terminal; without it their log lines are coloured', async () => {
    const bed = await startBed();
    const runtime = mkdtempSync(join(tmpdir(), 'porter-nocolor-'));
    const terminals: Terminal[] = [];
    try {
      bed.writeConfig((config) => {
        delete config.log.pretty;
      });
      bed.api.enqueue(SIM_SERVER_ID, { command: 'give Steve diamond 1', player: 'Steve', offlineExecute: false });
      // The pane inherits this process's environment: "without" means NO_COLOR taken out of it. Each its
      // own runtime folder, where a demo leaves its state for porter sim buy.
      const open = (args: readonly string[], noColor: boolean) => {
        const terminal = new Terminal(
          args,
          { XDG_RUNTIME_DIR: mkdtempSync(join(runtime, 'run-')), ...(noColor ? { NO_COLOR: '1' } : {}) },
          bed.dir,
          ['NO_COLOR'],
        );
        terminals.push(terminal);
        return terminal;
      };
      const plainRun = open([CLI, 'run', '-c', bed.configPath], true);
      await plainRun.waitFor(/INFO: itest: delivered "give Steve diamond 1"/, 'the delivery with NO_COLOR=1');
      plainRun.press('C-c');
      assert.equal(await ended(plainRun), 0, plainRun.screen());
      bed.api.enqueue(SIM_SERVER_ID, { command: 'give Steve diamond 2', player: 'Steve', offlineExecute: false });
      const colourRun = open([CLI, 'run', '-c', bed.configPath], false);
      await colourRun.waitFor(/delivered "give Steve diamond 2"/, 'the delivery without NO_COLOR');
      colourRun.press('C-c');
      assert.equal(await ended(colourRun), 0, colourRun.screen());

      const demos = [true, false].map((noColor) => open([CLI, 'demo', '--join-after', '500'], noColor));
      for (const demo of demos) assert.equal(await ended(demo), 0, demo.screen());
      const [plainDemo, colourDemo] = demos.map((demo) => demo.screen({ escapes: true }));
      assert.match(plainDemo!, /What the store saw:/);
      for (const [name, screen] of [
        ['porter run', plainRun.screen({ escapes: true })],
        ['porter demo', plainDemo!],
      ] as const) {
        assert.doesNotMatch(screen, COLOUR, `${name} with NO_COLOR=1 coloured:\n${JSON.stringify(screen)}`);
      }
      assert.match(colourRun.screen({ escapes: true }), COLOUR, 'porter run without NO_COLOR: no colour');
      assert.match(colourDemo!, COLOUR, 'porter demo without NO_COLOR: no colour');
    } finally {
      for (const terminal of terminals) terminal.close();
      rmSync(runtime, { recursive: true, force: true });
      await bed.close();
    }
  });
});
