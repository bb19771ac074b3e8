import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startRconServer } from '../../src/sim/rcon-server.js';
import { SIM_SERVER_ID, SIM_TOKEN, startSellerApi, type FakeSellerApi } from '../../src/sim/seller-api.js';
import { Terminal } from '../helpers/tmux.js';
import { waitFor } from '../helpers/wait-for.js';
import { CLI, WAIT } from './harness.js';
import { missingTool } from '../ship/run.js';
import { freePort } from '../../bench/lib/free-port.js';

/**
 * `porter init` run a second time, stopped half-way, and meeting a game server whose RCON it has
 * just switched on: in a real terminal (tmux), as an owner meets it in the first hour.
 */

const OFF = 'enable-rcon=false\nrcon.port=PORT\nrcon.password=\nmotd=A Minecraft Server\nonline-mode=true\n';

function porter(args: readonly string[], cwd: string): Promise<{ code: number; output: string }> {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) if (!key.startsWith('PORTER_') && key !== 'NODE_TEST_CONTEXT') env[key] = value;
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], { timeout: 60_000, cwd, env }, (error, stdout, stderr) => {
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, output: stdout + stderr });
    });
  });
}

/** The screen as one line: clack wraps long lines and draws a gutter. */
const flat = (screen: string) => screen.replace(/\s*\n[│\s]*/g, ' ');

const skip = missingTool('tmux', 'apt-get install tmux');

describe('porter init repeated, stopped, retried (terminal)', { skip }, () => {
  let api: FakeSellerApi;
  let work: string;
  before(async () => {
    api = await startSellerApi({ servers: [{ id: SIM_SERVER_ID, name: 'survival' }] });
    work = mkdtempSync(join(tmpdir(), 'porter-init-repeat-'));
  });
  after(async () => {
    await api.close();
    rmSync(work, { recursive: true, force: true });
  });

  /** A Minecraft folder with RCON off, its rcon.port `port`. */
  function minecraftOff(name: string, port: number): string {
    const folder = join(work, name);
    mkdirSync(folder, { recursive: true });
    writeFileSync(join(folder, 'server.properties'), OFF.replace('PORT', String(port)));
    return folder;
  }

  async function answerStore(terminal: Terminal): Promise<void> {
    await terminal.waitFor(/Store API address/, 'the API address question');
    terminal.type(api.url);
    terminal.press('Enter');
    await terminal.waitFor(/API token/, 'the token question');
    terminal.type(SIM_TOKEN);
    terminal.press('Enter');
    await terminal.waitFor(/Which of the store's servers/, 'the server list');
    terminal.press('Enter');
  }

  /** The store answered, then yes to switching RCON on and to the settings found: init goes on to the login. */
  async function acceptTheEdit(terminal: Terminal): Promise<void> {
    await answerStore(terminal);
    await terminal.waitFor(/Set enable-rcon=true/, 'the edit offered');
    terminal.press('Left');
    terminal.press('Enter');
    await terminal.waitFor(/Use these settings\?/, 'the detected settings');
    terminal.press('Enter');
  }

  test('files of an earlier run are found before the first question; written elsewhere on request, the old ones kept', async () => {
    const dir = join(work, 'earlier');
    mkdirSync(dir);
    writeFileSync(join(dir, 'config.json'), '{"kept": true}\n');
    const game = await startRconServer({ password: 'repeatPassword123', flavour: 'minecraft' });
    const folder = join(work, 'repeat-game');
    mkdirSync(folder);
    writeFileSync(join(folder, 'server.properties'), `enable-rcon=true\nrcon.port=${game.port}\nrcon.password=repeatPassword123\n`);
    const terminal = new Terminal([CLI, 'init', '--dir', dir, '--game-dir', folder], {}, work);
    try {
      const first = await terminal.waitFor(/What should porter init do with them\?/, 'the question about the files there');
      assert.doesNotMatch(first, /Store API address/, 'asked before anything else');
      assert.match(flat(first), /earlier already holds config\.json/);
      terminal.press('Down');
      terminal.press('Enter');
      await terminal.waitFor(/Folder to write the configuration to/, 'the folder question');
      terminal.press('Enter'); // the offered earlier-2
      await answerStore(terminal);
      await terminal.waitFor(/Use these settings\?/, 'the detected settings');
      terminal.press('Enter');
      await terminal.waitFor(/ run -c /, 'the next steps');
      await waitFor(() => terminal.exitStatus() !== undefined, { ...WAIT, what: 'porter init to end' });
      assert.equal(terminal.exitStatus(), 0, terminal.screen());
      assert.equal(readFileSync(join(dir, 'config.json'), 'utf8'), '{"kept": true}\n', 'the earlier file is kept');
      const check = await porter(['check', '-c', join(work, 'earlier-2', 'config.json')], work);
      assert.equal(check.code, 0, check.output);
    } finally {
      terminal.close();
      await game.close();
    }
  });

  test('without a terminal, files of an earlier run end init before the token is tried (78, naming --force and --dir)', async () => {
    const dir = join(work, 'earlier-flags');
    mkdirSync(dir);
    writeFileSync(join(dir, 'api-token'), 'gci_kept\n');
    const before = api.requests.length;
    const result = await porter(['init', '--dir', dir, '--api-url', api.url], work);
    assert.equal(result.code, 78, result.output);
    assert.match(result.output, /earlier-flags\/api-token already exists: pass --force to replace, or --dir DIR to write elsewhere/);
    assert.equal(api.requests.length, before, 'the store was not asked');
  });

  test('with --systemd, a unit of other text where it would go is found first too (78, before the token is tried)', async () => {
    const units = join(work, 'units');
    mkdirSync(units);
    writeFileSync(join(units, 'porter.service'), '[Service]\nExecStart=/bin/true\n');
    const before = api.requests.length;
    const result = await porter(['init', '--systemd', '--dir', join(work, 'fresh-etc'), '--unit-dir', units, '--api-url', api.url], work);
    assert.equal(result.code, 78, result.output);
    assert.match(result.output, /units\/porter\.service already exists: pass --force/);
    assert.equal(api.requests.length, before, 'the store was not asked');
  });

  test('the edit is backed up, asked once in plain words; Ctrl-C after it says what changed and where the backup is, exit 130', async () => {
    const folder = minecraftOff('stopped-game', 25575);
    const original = readFileSync(join(folder, 'server.properties'));
    const dir = join(work, 'stopped');
    const terminal = new Terminal([CLI, 'init', '--dir', dir, '--game-dir', folder], {}, work);
    try {
      await answerStore(terminal);
      const asked = await terminal.waitFor(/Set enable-rcon=true and a new rcon\.password in \.\/server\.properties\?/, 'the edit offered');
      assert.doesNotMatch(flat(asked), /server\.properties in \.\/server\.properties\?/, 'the file is named once');
      const mark = asked.length;
      terminal.press('Left');
      terminal.press('Enter');
      const edited = await terminal.waitFor(/Use these settings\?/, 'the detected settings', mark);
      assert.match(flat(edited.slice(mark)), /\.\/server\.properties\.porter-backup/);
      assert.doesNotMatch(edited.slice(mark), /rcon\.password is empty/, 'no stale problem after the edit that answered it');
      assert.deepEqual(readFileSync(join(folder, 'server.properties.porter-backup')), original);
      assert.match(readFileSync(join(folder, 'server.properties'), 'utf8'), /enable-rcon=true/);
      terminal.press('C-c');
      await waitFor(() => terminal.exitStatus() !== undefined, { ...WAIT, what: 'porter init to end' });
      assert.equal(terminal.exitStatus(), 130, terminal.screen());
      const said = flat(terminal.screen());
      assert.doesNotMatch(said, /nothing was written/);
      assert.match(said, /\.\/server\.properties was changed \(set enable-rcon=true and a new rcon\.password\)/);
      assert.match(said, /the file as it was is in \.\/server\.properties\.porter-backup/);
      assert.ok(!existsSync(dir), 'no porter configuration written');
    } finally {
      terminal.close();
    }
  });

  test('Ctrl-C while the login is tried (not at a question) also names the change and its backup, exit 130', async () => {
    // A game server that takes the connection and never answers: init is proving the login, no question is open.
    const connected: Socket[] = [];
    const silent = createServer((socket) => void connected.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const folder = minecraftOff('hanging-game', (silent.address() as AddressInfo).port);
    const dir = join(work, 'hanging');
    const terminal = new Terminal([CLI, 'init', '--dir', dir, '--game-dir', folder], {}, work);
    try {
      await acceptTheEdit(terminal);
      await waitFor(() => connected.length > 0, { ...WAIT, what: 'the login to be tried' });
      terminal.press('C-c');
      await waitFor(() => terminal.exitStatus() !== undefined, { ...WAIT, what: 'porter init to end' });
      assert.equal(terminal.exitStatus(), 130, terminal.screen());
      assert.match(
        flat(terminal.screen()),
        /server\.properties was changed .* the file as it was is in \.\/server\.properties\.porter-backup/,
      );
      assert.ok(!existsSync(dir), 'no porter configuration written');
    } finally {
      terminal.close();
      for (const socket of connected) socket.destroy();
      silent.close();
    }
  });

  test('after switching RCON on: restart the game server, then Enter tries the login again', async () => {
    const port = await freePort();
    const folder = minecraftOff('restart-game', port);
    const dir = join(work, 'restarted');
    const terminal = new Terminal([CLI, 'init', '--dir', dir, '--game-dir', folder], {}, work);
    let game: Awaited<ReturnType<typeof startRconServer>> | undefined;
    try {
      await acceptTheEdit(terminal);
      const asked = await terminal.waitFor(/Try the login again/, 'the offer to try again');
      const said = flat(asked);
      assert.match(said, /It reads \.\/server\.properties only when it starts: restart the game server now/);
      assert.doesNotMatch(said, /check host and port|porter retries|Write the configuration anyway/);
      // The owner restarts the game server, which now reads the password init wrote.
      const password = /^rcon\.password=(.*)$/m.exec(readFileSync(join(folder, 'server.properties'), 'utf8'))![1]!;
      game = await startRconServer({ password, port, flavour: 'minecraft', players: ['Steve'] });
      terminal.press('Enter');
      const done = await terminal.waitFor(/ run -c /, 'the next steps');
      assert.match(done, /1 player online: steve/i);
      await waitFor(() => terminal.exitStatus() !== undefined, { ...WAIT, what: 'porter init to end' });
      assert.equal(terminal.exitStatus(), 0, terminal.screen());
      const check = await porter(['check', '-c', join(dir, 'config.json')], work);
      assert.equal(check.code, 0, check.output);
    } finally {
      terminal.close();
      await game?.close();
    }
  });

  test('an address that did not answer is named with --api-url and offered again to correct', async () => {
    const terminal = new Terminal([CLI, 'init', '--dir', join(work, 'typo')], {}, work);
    try {
      await terminal.waitFor(/Store API address/, 'the API address question');
      terminal.type('http://127.0.0.1:1');
      terminal.press('Enter');
      await terminal.waitFor(/API token/, 'the token question');
      terminal.type(SIM_TOKEN);
      terminal.press('Enter');
      const screen = await terminal.waitFor(
        /could not be reached[\s\S]*Store API address[\s\S]*http:\/\/127\.0\.0\.1:1/,
        'the address again',
      );
      const said = flat(screen);
      assert.match(said, /check the address \(--api-url\)/);
      assert.doesNotMatch(said, /api\.baseUrl|porter retries/);
      for (let i = 0; i < 'http://127.0.0.1:1'.length; i++) terminal.press('BSpace');
      terminal.type(api.url);
      terminal.press('Enter');
      await terminal.waitFor(/token accepted/, 'the token proven, not asked again');
    } finally {
      terminal.close();
    }
  });
});
