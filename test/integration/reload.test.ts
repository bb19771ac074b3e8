import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { waitFor } from '../helpers/wait-for.js';
import { acceptedReports, isSettled, SIM_SERVER_ID, SIM_TOKEN, startBed, WAIT, type TestBed } from './harness.js';

/**
 * `kill -HUP` (what `systemctl reload porter` sends) during deliveries, over the real CLI: servers
 * added, removed and changed take effect without a restart, nothing is claimed twice or lost, and
 * an invalid file leaves the running configuration as it was. A rotated API token is picked up
 * from its file on the first 401.
 */

const LOBBY = SIM_SERVER_ID;
const SURVIVAL = '2c5f39cb-3fb2-42e3-994f-1127e4ddb538';
const CREATIVE = '3d6a4adc-4fc3-43f4-8a5e-2238f5eec649';

function server(bed: TestBed, id: string, name: string) {
  const base = bed.baseConfig().servers[0]!;
  return { ...base, id, name, executor: { ...base.executor } };
}

/** Every command the store holds was run as often as it was claimed (0 or 1) and reported once when settled. */
function assertOnceEach(bed: TestBed): void {
  for (const command of bed.api.commands()) {
    const text = String(command.command);
    assert.ok(command.claims <= 1, `${text} was claimed ${command.claims} times`);
    assert.ok(bed.ranCount(text) <= 1, `${text} ran ${bed.ranCount(text)} times`);
    if (isSettled(command.status)) assert.equal(acceptedReports(command), 1, `${text} reports`);
  }
}

describe('reload on SIGHUP through the real CLI', () => {
  test('added, removed and changed servers during deliveries: 0 lost, 0 twice; an invalid file keeps the running config', async () => {
    const bed = await startBed({ api: { servers: [LOBBY, SURVIVAL, CREATIVE] }, rcon: { players: ['Steve'] } });
    try {
      bed.writeConfig((config) => {
        config.servers = [server(bed, LOBBY, 'lobby'), server(bed, SURVIVAL, 'survival')];
      });
      const porter = bed.spawnPorter();
      await porter.waitForEvent('porter.started');
      let n = 0;
      const enqueue = (serverId: string, label: string) =>
        bed.api.enqueue(serverId, { command: `say ${label} ${n++}`, player: 'Steve', offlineExecute: true });
      const before = [...Array(20).keys()].flatMap(() => [
        enqueue(LOBBY, 'lobby'),
        enqueue(SURVIVAL, 'survival'),
        enqueue(CREATIVE, 'creative'),
      ]);
      await waitFor(() => bed.api.commands().filter((c) => c.status === 'EXECUTED').length >= 6 || porter.exit, {
        ...WAIT,
        what: 'deliveries under way',
      });

      // lobby changes (its player list refresh), survival goes, creative comes.
      bed.writeConfig((config) => {
        config.servers = [
          { ...server(bed, LOBBY, 'lobby'), players: { preset: 'minecraft', refreshMs: 300 } },
          server(bed, CREATIVE, 'creative'),
        ];
      });
      porter.kill('SIGHUP');
      const reloaded = await porter.waitForEvent('reload.done');
      // What changed is told in the message: an operator reads it there.
      assert.match(String(reloaded.msg), /added creative; removed survival; restarted lobby/);
      assert.deepEqual(new Set(reloaded.servers as string[]), new Set(['lobby', 'creative']));
      const after = [...Array(10).keys()].flatMap(() => [
        enqueue(LOBBY, 'lobby'),
        enqueue(SURVIVAL, 'survival'),
        enqueue(CREATIVE, 'creative'),
      ]);

      const byId = () => new Map(bed.api.commands().map((c) => [c.id, c]));
      const lobbyAndCreative = [...before, ...after].filter((id) => byId().get(id)?.serverId !== SURVIVAL);
      await waitFor(() => lobbyAndCreative.every((id) => isSettled(byId().get(id)?.status ?? '')) || porter.exit, {
        ...WAIT,
        what: 'every lobby and creative purchase, from before and after the reload',
      });
      assert.equal(porter.exit, undefined, porter.tail());
      const survival = bed.api.commands().filter((c) => c.serverId === SURVIVAL);
      assert.ok(
        survival.every((c) => c.status === 'EXECUTED' || c.status === 'SCHEDULED'),
        'survival finished what it held and claimed nothing after it was removed',
      );
      assert.ok(
        survival.filter((c) => after.includes(c.id)).every((c) => c.claims === 0),
        'nothing of survival is claimed after the reload',
      );

      // An invalid file: logged, and the running configuration goes on delivering.
      writeFileSync(bed.configPath, '{ "api": ');
      porter.kill('SIGHUP');
      const refused = await porter.waitForEvent('reload.invalid');
      assert.match(JSON.stringify(refused), /config\.json/, 'the line names the invalid file');
      const late = enqueue(CREATIVE, 'creative');
      await waitFor(() => isSettled(byId().get(late)?.status ?? '') || porter.exit, {
        ...WAIT,
        what: 'a delivery after the refused reload',
      });
      assert.equal(byId().get(late)?.status, 'EXECUTED');

      porter.kill('SIGTERM');
      assert.deepEqual(await porter.waitExit(), { code: 0, signal: null }, porter.tail());
      assertOnceEach(bed);
      assert.ok(!porter.output.includes(SIM_TOKEN));
    } finally {
      await bed.close();
    }
  });

  test('a SIGHUP while porter is still loading its config is held and applied once it runs, never the default that ends it', async () => {
    const bed = await startBed();
    try {
      const text = readFileSync(bed.writeConfig(), 'utf8');
      // A FIFO as the config file: porter blocks reading it, so the signal lands exactly there.
      rmSync(bed.configPath);
      execFileSync('mkfifo', ['-m', '600', bed.configPath]);
      const porter = bed.spawnPorter();
      const feed = async () => {
        const fifo = await open(bed.configPath, 'w'); // resolves once porter opened it to read
        await fifo.writeFile(text);
        await fifo.close();
      };
      const first = open(bed.configPath, 'w');
      const writer = await first;
      porter.kill('SIGHUP');
      await writer.writeFile(text);
      await writer.close();
      await porter.waitForEvent('porter.started');
      await feed(); // the reload reads the file again
      await porter.waitForEvent('reload.done');
      const id = bed.api.enqueue(LOBBY, { command: 'say after an early hangup', offlineExecute: true });
      await waitFor(() => isSettled(bed.api.commands().find((c) => c.id === id)?.status ?? '') || porter.exit, {
        ...WAIT,
        what: 'a delivery',
      });
      assert.equal(porter.exit, undefined, porter.tail());
      porter.kill('SIGTERM');
      assert.deepEqual(await porter.waitExit(), { code: 0, signal: null }, porter.tail());
    } finally {
      await bed.close();
    }
  });

  test('a burst of SIGHUPs during deliveries never stops porter and never runs anything twice', async () => {
    const bed = await startBed();
    try {
      bed.writeConfig();
      const porter = bed.spawnPorter();
      await porter.waitForEvent('porter.started');
      const ids = [...Array(40).keys()].map((i) => bed.api.enqueue(LOBBY, { command: `say burst ${i}`, offlineExecute: true }));
      for (let i = 0; i < 25; i++) {
        porter.kill('SIGHUP');
        await waitFor(() => porter.events('reload.done').length > 0 || porter.exit !== undefined, {
          ...WAIT,
          what: 'the first reload',
        });
      }
      const status = (id: string) => bed.api.commands().find((c) => c.id === id)?.status ?? '';
      await waitFor(() => ids.every((id) => isSettled(status(id))) || porter.exit, { ...WAIT, what: 'every purchase' });
      assert.equal(porter.exit, undefined, porter.tail());
      assert.ok(porter.events('reload.done').length >= 1);
      porter.kill('SIGTERM');
      assert.deepEqual(await porter.waitExit(), { code: 0, signal: null }, porter.tail());
      assert.deepEqual(new Set(ids.map(status)), new Set(['EXECUTED']));
      assertOnceEach(bed);
    } finally {
      await bed.close();
    }
  });

  test('a changed game password the server refuses: the server keeps running with its previous settings', async () => {
    const bed = await startBed();
    try {
      bed.writeConfig();
      const porter = bed.spawnPorter();
      await porter.waitForEvent('porter.started');
      bed.writeConfig((config) => {
        config.servers[0]!.executor.password = 'not-the-password-at-all';
      });
      porter.kill('SIGHUP');
      const reloaded = await porter.waitForEvent('reload.done');
      assert.equal(Array.isArray(reloaded.refused) && reloaded.refused.length, 1, porter.tail());
      const refusals = porter.events('reload.login.refused');
      assert.equal(refusals.length, 1, porter.tail());
      // The operator is told the server goes on with what it had (not that it was not started).
      assert.match(String(refusals[0]!.msg), /keeps running with its previous ones/);
      const id = bed.api.enqueue(LOBBY, { command: 'say still here', offlineExecute: true });
      await waitFor(() => isSettled(bed.api.commands().find((c) => c.id === id)?.status ?? '') || porter.exit, {
        ...WAIT,
        what: 'a delivery with the previous password',
      });
      assert.equal(porter.exit, undefined, porter.tail());
      assert.ok(!porter.output.includes('not-the-password-at-all'));
      porter.kill('SIGTERM');
      assert.deepEqual(await porter.waitExit(), { code: 0, signal: null }, porter.tail());
    } finally {
      await bed.close();
    }
  });

  test('the API token rotated under a running porter: the token file is read again on the 401 and deliveries go on', async () => {
    const OLD = 'gci_before-rotation-1111111111';
    const NEW = 'gci_after-rotation-22222222222';
    const scopes = ['commands:execute', 'servers:read'];
    const bed = await startBed({ api: { tokens: { [OLD]: scopes } } });
    try {
      const tokenFile = join(bed.dir, 'api-token');
      writeFileSync(tokenFile, `${OLD}\n`, { mode: 0o600 });
      bed.writeConfig((config) => {
        delete config.api.token;
        config.api.tokenFile = './api-token';
      });
      const porter = bed.spawnPorter();
      const first = bed.api.enqueue(LOBBY, { command: 'say before rotation', offlineExecute: true });
      const status = (id: string) => bed.api.commands().find((c) => c.id === id)?.status ?? '';
      await waitFor(() => isSettled(status(first)) || porter.exit, { ...WAIT, what: 'a delivery with the old token' });

      // The store owner regenerates the token and writes the new one into the file.
      bed.api.setToken(NEW, scopes);
      bed.api.setToken(OLD, null);
      writeFileSync(tokenFile, `${NEW}\n`, { mode: 0o600 });
      const second = bed.api.enqueue(LOBBY, { command: 'say after rotation', offlineExecute: true });
      await waitFor(() => isSettled(status(second)) || porter.exit, { ...WAIT, what: 'a delivery with the new token' });
      assert.equal(porter.exit, undefined, porter.tail());
      assert.deepEqual([status(first), status(second)], ['EXECUTED', 'EXECUTED']);
      assert.ok(
        bed.api.requests.some((r) => r.status === 401),
        'the old token was refused once',
      );

      porter.kill('SIGTERM');
      assert.deepEqual(await porter.waitExit(), { code: 0, signal: null }, porter.tail());
      assert.ok(!porter.output.includes(OLD) && !porter.output.includes(NEW), 'neither token reaches the log');
    } finally {
      await bed.close();
    }
  });
});
