import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { waitFor } from '../helpers/wait-for.js';
import { gate, SIM_SERVER_ID, SIM_TOKEN, startBed, WAIT, type PorterConfig, type TestBed } from './harness.js';

/**
 * A removed server's claim is still reported (docs/design.md#one-servers-runner): a reload removes a
 * server whose command is in hand while its store refuses reports (503) and its game server is
 * slow, so nothing can be reported within the drain. The outcome is in the journal: porter reports
 * it through the store it was claimed for once the API takes it, without the server configured,
 * and a restart changes nothing. Only a store gone entirely leaves a claim, and then porter check
 * and /healthz say so; adding the store back (not its server) reports it.
 */

const OTHER_SERVER = '2c5f39cb-3fb2-42e3-994f-1127e4ddb538';
const EU_TOKEN = 'gci_eu_network_leftover_55aa';
const SCOPES = ['commands:execute', 'servers:read'];

function configure(bed: TestBed, edit: (config: PorterConfig & Record<string, unknown>) => void): void {
  bed.writeConfig((config) => {
    config.shutdown.drainMs = 1_000;
    const home = config.servers[0]!;
    config.servers.push({ ...home, id: OTHER_SERVER, name: 'other' });
    edit(config as PorterConfig & Record<string, unknown>);
  });
}

async function healthz(port: number): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(10_000) });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** Removes `id` from the running porter's configuration and waits until the reload is done. */
async function removeAndReload(
  bed: TestBed,
  porter: ReturnType<TestBed['spawnPorter']>,
  edit: (config: PorterConfig & Record<string, unknown>) => void,
): Promise<void> {
  const before = porter.events('reload.done').length;
  configure(bed, edit);
  porter.kill('SIGHUP');
  await waitFor(() => porter.events('reload.done').length > before || porter.exit, { ...WAIT, what: 'the reload' });
}

describe("a removed server's claim is still reported", () => {
  test('through its store, once the API takes reports again; the server is not configured, and a restart changes nothing', async () => {
    const bed = await startBed({ api: { servers: [SIM_SERVER_ID, OTHER_SERVER] } });
    const answer = gate();
    try {
      configure(bed, () => undefined);
      const slow = 'say held-by-the-game';
      bed.rcon.setHandler((command) => (command === slow ? { text: '', after: answer.promise } : undefined));
      const id = bed.api.enqueue(SIM_SERVER_ID, { command: slow });
      const porter = bed.spawnPorter();
      await waitFor(() => bed.rcon.executed.some((e) => e.command === slow) || porter.exit, { ...WAIT, what: 'the command in hand' });
      for (const route of ['done', 'fail'] as const)
        bed.api.inject(route, '503', { serverId: SIM_SERVER_ID, times: Number.POSITIVE_INFINITY });
      await removeAndReload(bed, porter, (config) => {
        config.servers = config.servers.filter((s) => s.id !== SIM_SERVER_ID);
      });
      answer.open();
      // Reported (and refused with 503) through its store, after the drain, with the server gone.
      await waitFor(() => bed.api.requests.some((r) => r.commandId === id && r.route === 'fail') || porter.exit, {
        ...WAIT,
        what: "the removed server's claim reported",
      });
      bed.api.clearFaults();
      await waitFor(() => bed.api.commands().find((c) => c.id === id)?.status === 'FAILED' || porter.exit, {
        ...WAIT,
        what: 'the report accepted',
      });
      assert.match(bed.api.commands().find((c) => c.id === id)!.error ?? '', /^outcome unknown/);
      porter.kill('SIGTERM');
      assert.deepEqual(await porter.waitExit(), { code: 0, signal: null }, porter.tail());
      assert.equal(porter.events('porter.stopped')[0]?.unreported, 0);

      const again = bed.spawnPorter();
      await again.waitForEvent('porter.started');
      again.kill('SIGTERM');
      assert.deepEqual(await again.waitExit(), { code: 0, signal: null });
      assert.equal(bed.ranCount(slow), 1);
      const reports = bed.api
        .commands()
        .find((c) => c.id === id)!
        .reports.filter((r) => r.status === 200);
      assert.equal(reports.length, 1);
    } finally {
      answer.open();
      await bed.close();
    }
  });

  test('a store gone entirely: porter check and /healthz name the claim; the store added back (not its server) reports it', async () => {
    const bed = await startBed({ api: { tokens: { [SIM_TOKEN]: SCOPES, [EU_TOKEN]: SCOPES }, servers: [SIM_SERVER_ID, OTHER_SERVER] } });
    const answer = gate();
    try {
      writeFileSync(join(bed.dir, 'eu-token'), `${EU_TOKEN}\n`, { mode: 0o600 });
      const withEu = (config: PorterConfig & Record<string, unknown>) => {
        config.servers[1]!.store = 'eu';
        config.stores = { eu: { baseUrl: bed.api.url, tokenFile: './eu-token', timeoutMs: 30_000 } };
        config.health = { listen: '127.0.0.1:0' };
      };
      configure(bed, withEu);
      const slow = 'say held-for-eu';
      bed.rcon.setHandler((command) => (command === slow ? { text: '', after: answer.promise } : undefined));
      const id = bed.api.enqueue(OTHER_SERVER, { command: slow });
      const porter = bed.spawnPorter();
      const port = (await porter.waitForEvent('health.listening')).port as number;
      await waitFor(() => bed.rcon.executed.some((e) => e.command === slow) || porter.exit, { ...WAIT, what: 'the command in hand' });
      for (const route of ['done', 'fail'] as const)
        bed.api.inject(route, '503', { serverId: OTHER_SERVER, times: Number.POSITIVE_INFINITY });
      await removeAndReload(bed, porter, (config) => {
        config.servers = config.servers.filter((s) => s.id !== OTHER_SERVER);
        config.health = { listen: '127.0.0.1:0' };
      });
      answer.open();
      bed.api.clearFaults();
      const degraded = await healthz(port);
      assert.equal(degraded.status, 200);
      assert.equal(degraded.body.status, 'degraded');
      const journal = degraded.body.journal as { unreportable?: { commands: string[]; stores: string[] } };
      assert.deepEqual(journal.unreportable?.commands, [`${OTHER_SERVER}/${id}`]);
      assert.deepEqual(journal.unreportable?.stores, ['eu']);
      const storeless = porter.events('leftovers.storeless');
      assert.ok(storeless.length > 0, porter.tail());
      assert.deepEqual(storeless.at(-1)!.commands, [`${OTHER_SERVER}/${id}`]);

      // Not spawnSync: the simulators answer from this process.
      const check = bed.spawnPorter({ args: ['check', '-c', bed.configPath] });
      await check.waitExit(60_000);
      assert.match(check.stdout, new RegExp(`claimed for a store no longer configured \\("eu"\\): ${OTHER_SERVER}/${id}`));
      assert.ok(!check.output.includes(EU_TOKEN));

      // The store back, its server not: the claim is reported through it.
      await removeAndReload(bed, porter, (config) => {
        withEu(config);
        config.servers = config.servers.filter((s) => s.id !== OTHER_SERVER);
      });
      await waitFor(() => bed.api.commands().find((c) => c.id === id)?.status === 'FAILED' || porter.exit, {
        ...WAIT,
        what: 'the report accepted',
      });
      assert.equal((await healthz(port)).body.status, 'ok');
      porter.kill('SIGTERM');
      assert.deepEqual(await porter.waitExit(), { code: 0, signal: null }, porter.tail());
      assert.ok(!porter.output.includes(EU_TOKEN));
    } finally {
      answer.open();
      await bed.close();
    }
  });
});
