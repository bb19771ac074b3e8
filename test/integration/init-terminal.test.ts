import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startBattlEyeServer } from '../../src/sim/battleye-server.js';
import { startRconServer } from '../../src/sim/faults/rcon-server.js';
import { startTelnetServer } from '../../src/sim/telnet-server.js';
import { startTShockServer } from '../../src/sim/tshock-server.js';
import { SIM_SERVER_ID, SIM_TOKEN, startSellerApi, type FakeSellerApi } from '../../src/sim/seller-api.js';
import { FakeWebRconServer } from '../peers/webrcon-server.js';
import { Terminal } from '../helpers/tmux.js';
import { waitFor } from '../helpers/wait-for.js';
import { CLI, isSettled, WAIT } from './harness.js';
import { fixtureTable } from '../init/fixture-table.js';
import { missingTool } from '../ship/run.js';

/**
 * `porter init` as a new user meets it: in a real terminal (tmux), answering the questions by
 * keyboard, pointed at a game server's folder (test/fixtures/game-dirs) while the simulated game
 * server runs. Each game's journey ends with files `porter check` accepts; Minecraft's goes on to
 * a first delivery.
 */

const FIXTURES = join(import.meta.dirname, '../../../test/fixtures/game-dirs');
const LOBBY = '2c5f39cb-3fb2-42e3-994f-1127e4ddb538';

interface RunningGame {
  readonly port: number;
  close(): Promise<void>;
}

interface GameCase {
  readonly fixture: string;
  /** The settings do not name the port (CS2: the game port): the simulator's goes in by --rcon-port. */
  readonly portFlag?: boolean;
  /** What the screen must also say about this folder. */
  readonly says?: RegExp;
  start(password: string): Promise<RunningGame>;
}

const rcon =
  (options: Omit<Parameters<typeof startRconServer>[0], 'password'>, listing?: { command: string; answer: string }) =>
  async (password: string): Promise<RunningGame> => {
    const server = await startRconServer({ password, ...options });
    if (listing) server.setHandler((command) => (command.toLowerCase() === listing.command.toLowerCase() ? listing.answer : undefined));
    return { port: server.port, close: () => server.close() };
  };

const GAMES: readonly GameCase[] = [
  { fixture: 'minecraft', start: rcon({ flavour: 'minecraft', players: ['Steve'] }) },
  {
    fixture: 'minecraft-itzg',
    says: /makes a new RCON password at every start/,
    start: rcon({ flavour: 'minecraft', players: ['Alex'] }),
  },
  { fixture: 'zomboid', start: rcon({ flavour: 'source', game: 'zomboid' }) },
  { fixture: 'palworld', start: rcon({ flavour: 'id0' }) },
  { fixture: 'source', portFlag: true, start: rcon({ flavour: 'source' }) },
  {
    fixture: 'ark',
    start: rcon({ flavour: 'source' }, { command: 'ListPlayers', answer: 'No Players Connected' }),
  },
  {
    fixture: 'squad',
    start: rcon(
      { flavour: 'source' },
      { command: 'ListPlayers', answer: '----- Active Players -----\n----- Recently Disconnected Players [Max of 15] -----\n' },
    ),
  },
  {
    fixture: 'conan',
    start: rcon(
      { flavour: 'source' },
      { command: 'listplayers', answer: 'Idx | Char name | Player name | User ID | Platform ID | Platform Name\n' },
    ),
  },
  {
    fixture: 'rust',
    start: async (password) => {
      const server = await FakeWebRconServer.start({ password });
      return { port: server.port, close: () => server.close() };
    },
  },
  {
    fixture: '7dtd',
    start: async (password) => {
      const server = await startTelnetServer({ password });
      return { port: server.port, close: () => server.close() };
    },
  },
  {
    fixture: 'terraria',
    start: async (token) => {
      const server = await startTShockServer({ token });
      return { port: server.port, close: () => server.close() };
    },
  },
  ...(['dayz', 'arma3'] as const).map((fixture): GameCase => ({
    fixture,
    start: async (password) => {
      const server = await startBattlEyeServer({ password });
      return { port: server.port, close: () => server.close() };
    },
  })),
];

const FIXTURE_TABLE = fixtureTable();

/** The port and password the fixture's settings name (its row in test/fixtures/game-dirs/README.md). */
function fixtureOf(game: GameCase): { readonly port: number; readonly password: string } {
  const row = FIXTURE_TABLE.get(game.fixture);
  if (row?.password === undefined) throw new Error(`${game.fixture}: no row with a password in test/fixtures/game-dirs/README.md`);
  return { port: row.port, password: row.password };
}

/** A copy of the fixture folder whose settings name `port` instead of the fixture's. */
function gameFolder(work: string, game: GameCase, port: number): string {
  const folder = join(work, `${game.fixture}-folder`);
  cpSync(join(FIXTURES, game.fixture), folder, { recursive: true });
  // Only where a setting's value starts: the fixtures' passwords end in their port's digits.
  const setting = new RegExp(`(?<=[=\\s:"'>(,])${fixtureOf(game).port}(?!\\d)`, 'g');
  for (const entry of readdirSync(folder, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const file = join(entry.parentPath, entry.name);
    writeFileSync(file, readFileSync(file, 'utf8').replace(setting, String(port)));
  }
  return folder;
}

function porter(args: readonly string[]): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], { timeout: 60_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, output: stdout + stderr });
    });
  });
}

const skip = missingTool('tmux', 'apt-get install tmux');

describe('porter init in a terminal', { skip }, () => {
  let api: FakeSellerApi;
  let work: string;
  before(async () => {
    api = await startSellerApi({
      servers: [
        { id: LOBBY, name: 'lobby' },
        { id: SIM_SERVER_ID, name: 'survival' },
      ],
    });
    work = mkdtempSync(join(tmpdir(), 'porter-init-tty-'));
  });
  after(async () => {
    await api.close();
    rmSync(work, { recursive: true, force: true });
  });

  /** Types the answers a new user gives; returns the terminal at the end, for more checks. */
  async function answer(terminal: Terminal, options: { wrongTokenFirst?: boolean } = {}): Promise<void> {
    await terminal.waitFor(/Store API address/, 'the API address question');
    terminal.type(api.url);
    terminal.press('Enter');
    await terminal.waitFor(/API token/, 'the token question');
    if (options.wrongTokenFirst) {
      terminal.type('gci_not_the_token_0000000');
      terminal.press('Enter');
      await terminal.waitFor(/refused this token \(401\)/, 'the refused token');
    }
    terminal.type(SIM_TOKEN);
    terminal.press('Enter');
    const servers = await terminal.waitFor(/Which of the store's servers/, 'the server list');
    assert.match(servers, /lobby[\s\S]*survival/);
    terminal.press('Down');
    terminal.press('Enter');
    await terminal.waitFor(/Use these settings\?/, 'the detected settings');
    terminal.press('Enter');
  }

  for (const game of GAMES) {
    test(`${game.fixture}: the detected settings accepted, the login proven, files porter check accepts`, async () => {
      const { password } = fixtureOf(game);
      const server = await game.start(password);
      const terminal = new Terminal(
        [
          CLI,
          'init',
          '--game-dir',
          gameFolder(work, game, server.port),
          '--dir',
          join(work, game.fixture),
          ...(game.portFlag ? ['--rcon-port', String(server.port)] : []),
        ],
        {},
        work,
      );
      try {
        await answer(terminal, { wrongTokenFirst: game.fixture === 'minecraft' });
        const screen = await terminal.waitFor(/porter(\.js)? run -c/, 'the next steps');
        assert.match(screen, /login to 127\.0\.0\.1:\d+ accepted|accepted/);
        assert.ok(!screen.includes(password) && !screen.includes(SIM_TOKEN), 'no secret on the screen');
        if (game.says) assert.match(screen.replace(/\s*\n[│\s]*/g, ' '), game.says);
        await waitFor(() => terminal.exitStatus() !== undefined, { ...WAIT, what: 'porter init to end' });
        assert.equal(terminal.exitStatus(), 0, terminal.screen());
        const config = join(work, game.fixture, 'config.json');
        assert.equal(statSync(config).mode & 0o777, 0o600);
        const check = await porter(['check', '-c', config]);
        assert.equal(check.code, 0, check.output);

        if (game.fixture === 'minecraft') {
          const id = api.enqueue(SIM_SERVER_ID, { command: 'give Steve diamond 1', player: 'Steve', offlineExecute: false });
          // init writes health.listen 127.0.0.1:9464; tests beside this one may hold that port.
          const written = JSON.parse(readFileSync(config, 'utf8')) as Record<string, unknown>;
          writeFileSync(config, JSON.stringify({ ...written, health: { listen: '127.0.0.1:0' } }), { mode: 0o600 });
          const run = execFile(process.execPath, [CLI, 'run', '-c', config], { timeout: 60_000 });
          try {
            await waitFor(() => isSettled(api.commands().find((c) => c.id === id)?.status ?? ''), { ...WAIT, what: 'the first delivery' });
          } finally {
            run.kill('SIGTERM');
          }
          assert.equal(api.commands().find((c) => c.id === id)?.status, 'EXECUTED');
        }
      } finally {
        terminal.close();
        await server.close();
      }
    });
  }

  test('Ctrl-C at a question ends init with nothing written, exit 130', async () => {
    const dir = join(work, 'cancelled');
    const terminal = new Terminal([CLI, 'init', '--dir', dir], {}, work);
    try {
      await terminal.waitFor(/Store API address/, 'the first question');
      terminal.press('C-c');
      await waitFor(() => terminal.exitStatus() !== undefined, { ...WAIT, what: 'porter init to end' });
      assert.equal(terminal.exitStatus(), 130, 'as for any program Ctrl-C ends');
      assert.match(terminal.screen(), /cancelled: nothing was written/);
      assert.throws(() => statSync(dir));
    } finally {
      terminal.close();
    }
  });
});
