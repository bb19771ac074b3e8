import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Terminal } from '../helpers/tmux.js';
import { waitFor } from '../helpers/wait-for.js';
import { missingTool } from '../ship/run.js';
import { execFile } from 'node:child_process';
import { CLI, isSettled, PorterProcess, SIM_SERVER_ID, startBed, WAIT } from './harness.js';

/**
 * What an owner sees in a terminal (tmux): `porter check` and `porter rcon` print their own lines
 * with no pretty log line (`[21:38:03.119] ERROR: …`) among them, and `porter run` says each
 * delivery in one line, not one line per field; colour unless NO_COLOR says otherwise. `porter
 * init` beside a running `porter sim` offers its store, and what it writes `porter check` passes.
 */

const PRETTY_LOG_LINE = /^\[\d\d:\d\d:\d\d(\.\d+)?\] [A-Z]+:/m;

/**
 * A colour in tmux's `capture-pane -e`: an SGR sequence setting a foreground or background colour
 * (30–38, 40–48, 90–97, 100–107). Not 39 and 49, the terminal's own colours, which tmux writes
 * after any attribute, nor inverse video (7), the cursor of a question.
 */
// eslint-disable-next-line no-control-regex -- the escape is the point
const COLOUR = /\u001b\[(?:\d+;)*(?:3[0-8]|4[0-8]|9[0-7]|10[0-7])(?:;\d+)*m/;

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
  test('NO_COLOR: porter run, porter demo and porter init colour nothing on a terminal; without it they do', async () => {
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
      // init's questions (@clack/prompts) colour through node:util's styleText, which reads NO_COLOR itself.
      const [plainInit, colourInit] = await Promise.all(
        [true, false].map(async (noColor) => {
          const init = open([CLI, 'init', '--dir', join(runtime, 'init')], noColor);
          await init.waitFor(/Store API address/, 'the first question');
          const screen = init.screen({ escapes: true });
          init.press('C-c');
          return screen;
        }),
      );
      for (const [name, screen] of [
        ['porter run', plainRun.screen({ escapes: true })],
        ['porter demo', plainDemo!],
        ['porter init', plainInit!],
      ] as const) {
        assert.doesNotMatch(screen, COLOUR, `${name} with NO_COLOR=1 coloured:\n${JSON.stringify(screen)}`);
      }
      assert.match(colourRun.screen({ escapes: true }), COLOUR, 'porter run without NO_COLOR: no colour');
      assert.match(colourDemo!, COLOUR, 'porter demo without NO_COLOR: no colour');
      assert.match(colourInit!, COLOUR, 'porter init without NO_COLOR: no colour');
    } finally {
      for (const terminal of terminals) terminal.close();
      rmSync(runtime, { recursive: true, force: true });
      await bed.close();
    }
  });
});

describe('porter init beside porter sim', { skip }, () => {
  /** A runtime folder of its own (where porter sim leaves its state file), and the environment of every process in it. */
  function rehearsal(): { dir: string; env: NodeJS.ProcessEnv } {
    const dir = mkdtempSync(join(tmpdir(), 'porter-init-sim-'));
    const env: NodeJS.ProcessEnv = {};
    for (const [key, value] of Object.entries(process.env)) if (!key.startsWith('PORTER_') && key !== 'NODE_TEST_CONTEXT') env[key] = value;
    env.XDG_RUNTIME_DIR = dir;
    return { dir, env };
  }
  /** The pane inherits this process's environment: none of init's own answers may come from it. */
  const ANSWERS = ['PORTER_API_URL', 'PORTER_API_TOKEN', 'PORTER_SERVER_ID', 'PORTER_GAME', 'PORTER_RCON_PASSWORD', 'PORTER_CONFIG'];

  test('a running sim is offered as the store: Enter through init, and porter check passes the config it wrote', async () => {
    const { dir, env } = rehearsal();
    const sim = new PorterProcess(['sim', '--json'], env);
    let terminal: Terminal | undefined;
    try {
      const info = await waitFor(
        () =>
          (sim.lines[0] as unknown as { storeUrl: string; token: string; password: string } | undefined) ??
          (sim.exit && assert.fail(sim.tail())),
        { ...WAIT, what: "the sim's config line" },
      );
      // Only now: the sim writes its state file before that line, and an init started earlier could
      // reach its store question first on a loaded machine and find no sim to offer.
      terminal = new Terminal([CLI, 'init', '--dir', join(dir, 'porter')], { XDG_RUNTIME_DIR: dir }, dir, ANSWERS);
      const offer = await terminal.waitFor(/rehearse with its store\?/, 'the offer of the running sim');
      assert.ok(offer.includes(`Use the sim's store at ${info.storeUrl}`), offer);
      terminal.press('Enter');
      await terminal.waitFor(new RegExp(`token accepted by ${info.storeUrl.replaceAll('.', '\\.')}`), "the sim's token, not asked");
      await terminal.waitFor(/Which of the store's servers/, "the sim's server");
      terminal.press('Enter');
      await terminal.waitFor(/Which game does this server run\?/, 'the game');
      terminal.press('Enter'); // Minecraft, the first listed, the sim's game
      await terminal.waitFor(/rcon host of the game server/, 'the host');
      terminal.press('Enter');
      await terminal.waitFor(/rcon port/, "the port, the sim's store lists it");
      terminal.press('Enter');
      await terminal.waitFor(/password/i, 'the password');
      terminal.type(info.password);
      terminal.press('Enter');
      const screen = await terminal.waitFor(/porter(\.js)? run -c/, 'the next steps');
      assert.ok(!screen.includes(info.token) && !screen.includes(info.password), 'no secret on the screen');
      assert.equal(await ended(terminal), 0, terminal.screen());
      const check = await new Promise<{ code: number; output: string }>((resolve) => {
        execFile(
          process.execPath,
          [CLI, 'check', '-c', join(dir, 'porter', 'config.json')],
          { env, timeout: 60_000 },
          (error, stdout, stderr) => resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, output: stdout + stderr }),
        );
      });
      assert.equal(check.code, 0, check.output);
    } finally {
      terminal?.close();
      sim.kill('SIGINT');
      await sim.waitExit();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("a sim's state file whose process is gone, or whose store does not answer, is named, not offered: init asks for the store", async () => {
    const { dir } = rehearsal();
    mkdirSync(join(dir, 'porter'), { mode: 0o700 });
    // Nothing listens on the discard port; a pid above the kernel's pid_max (at most 2^22) is no process's.
    const state = {
      game: 'minecraft',
      storeUrl: 'http://127.0.0.1:9',
      purchasesUrl: 'http://127.0.0.1:9/purchases',
      token: 'gci_sim_gone',
    };
    for (const [pid, says] of [
      [2 ** 22 + 17, /state file .*sim\.json is left from pid 4194321, which no longer runs: not offered/],
      [
        process.pid,
        new RegExp(
          `state file .*sim\\.json is left from pid ${process.pid}, whose store does not answer at http://127\\.0\\.0\\.1:9: not offered`,
        ),
      ],
    ] as const) {
      writeFileSync(join(dir, 'porter', 'sim.json'), JSON.stringify({ pid, ...state }), { mode: 0o600 });
      const terminal = new Terminal([CLI, 'init', '--dir', join(dir, 'porter-config')], { XDG_RUNTIME_DIR: dir }, dir, ANSWERS);
      try {
        const screen = await terminal.waitFor(/Store API address/, 'the store question');
        assert.match(screen.replace(/\s*\n[│\s]*/g, ' '), says);
        assert.doesNotMatch(screen, /rehearse with its store/);
      } finally {
        terminal.close();
      }
    }
    rmSync(dir, { recursive: true, force: true });
  });
});
