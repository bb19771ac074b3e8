import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { startRconServer } from '../../src/sim/faults/rcon-server.js';
import { waitFor } from '../helpers/wait-for.js';
import { failedWithAnswer, RCON_PASSWORD, SIM_SERVER_ID, SIM_TOKEN, startBed, WAIT, type LogLine, type PorterProcess } from './harness.js';

/**
 * Many stores in one porter, through the real CLI (docs/design.md#many-stores): two stores on
 * one Seller API, each with a server and its own game server. A store whose token is revoked
 * stops its own servers only (logged once, named by /healthz and the metric); the other store
 * keeps delivering; when every store is refused porter exits 78. No token ever leaves.
 */

const EU_SERVER_ID = '2c5f39cb-3fb2-42e3-994f-1127e4ddb538';
const EU_TOKEN = 'gci_eu_network_Z8x7c6v5b4n3m2';
const SCOPES = ['commands:execute', 'servers:read'];
/** A `store.refused` line of the store eu-network's revoked token. */
const euRefused = (line: LogLine) => line.store === 'eu-network' && line.status === 401 && line.apiCode === 'INVALID_INTEGRATION_TOKEN';

async function get(port: number, path: string): Promise<{ status: number; text: string }> {
  const response = await fetch(`http://127.0.0.1:${port}${path}`, { signal: AbortSignal.timeout(5000) });
  return { status: response.status, text: await response.text() };
}

function metric(text: string, sample: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${sample} `));
  return line === undefined ? undefined : Number(line.split(' ')[1]);
}

/** Every file porter wrote in its state directory, as one text. */
function stateFiles(dir: string): string {
  return readdirSync(dir)
    .map((name) => join(dir, name))
    .map((path) => (statSync(path).isDirectory() ? stateFiles(path) : readFileSync(path, 'utf8')))
    .join('\n');
}

function assertNoSecret(porter: PorterProcess, stateDir: string, secrets: readonly string[]): void {
  const stored = stateFiles(stateDir);
  for (const secret of secrets) {
    assert.ok(!porter.stdout.includes(secret), `stdout contains the secret ${secret.slice(0, 6)}…`);
    assert.ok(!porter.stderr.includes(secret), `stderr contains the secret ${secret.slice(0, 6)}…`);
    assert.ok(!stored.includes(secret), `the state directory holds the secret ${secret.slice(0, 6)}…`);
  }
}

describe('two stores in one porter', () => {
  test("one store's token revoked: its server stops, logged once, /healthz and the metric name it, the other store delivers; both revoked: exit 78; no token leaves", async () => {
    const bed = await startBed({ api: { tokens: { [SIM_TOKEN]: SCOPES, [EU_TOKEN]: SCOPES }, servers: [SIM_SERVER_ID, EU_SERVER_ID] } });
    const euGame = await startRconServer({ password: RCON_PASSWORD, flavour: 'minecraft', players: ['Steve'] });
    try {
      writeFileSync(join(bed.dir, 'eu-token'), `${EU_TOKEN}\n`, { mode: 0o600 });
      bed.writeConfig((config) => {
        const home = config.servers[0]!;
        config.servers.push({
          ...home,
          id: EU_SERVER_ID,
          name: 'eu-1',
          store: 'eu-network',
          executor: { ...home.executor, port: euGame.port },
        });
        Object.assign(config, {
          stores: { 'eu-network': { baseUrl: bed.api.url, tokenFile: './eu-token', timeoutMs: 5000 } },
          health: { listen: '127.0.0.1:0' },
        });
      });
      bed.api.enqueue(SIM_SERVER_ID, { command: 'say home-1' });
      bed.api.enqueue(EU_SERVER_ID, { command: 'say eu-1' });
      const porter = bed.spawnPorter();
      const listening = await porter.waitForEvent('health.listening');
      const port = listening.port as number;

      await waitFor(() => bed.api.commands().every((c) => c.status === 'EXECUTED'), { ...WAIT, what: 'both stores deliver' });
      assert.deepEqual(bed.ran(), ['say home-1']);
      assert.deepEqual(
        euGame.executed.filter((e) => !e.query).map((e) => e.command),
        ['say eu-1'],
      );
      const healthy = JSON.parse((await get(port, '/healthz')).text) as { status: string; stores: Record<string, unknown> };
      assert.equal(healthy.status, 'ok');
      assert.deepEqual(healthy.stores, {
        default: { status: 'ok', servers: ['itest'] },
        'eu-network': { status: 'ok', servers: ['eu-1'] },
      });

      bed.api.setToken(EU_TOKEN, null);
      const refused = await porter.waitForEvent('store.refused', euRefused);
      assert.equal(refused.level, 'error');
      // What the operator reads: which servers stop, that the others go on, where the token goes.
      assert.match(refused.msg ?? '', /its servers stop \(eu-1\), the other stores go on/);
      assert.match(refused.msg ?? '', /stores\.eu-network\.tokenFile/);

      // The other store keeps delivering a purchase made after the revocation.
      bed.api.enqueue(SIM_SERVER_ID, { command: 'say home-2' });
      bed.api.enqueue(EU_SERVER_ID, { command: 'say eu-2' });
      await waitFor(() => bed.api.commands().find((c) => c.command === 'say home-2')?.status === 'EXECUTED', {
        ...WAIT,
        what: 'the default store delivers after the other was refused',
      });
      const health = await get(port, '/healthz');
      assert.equal(health.status, 200, 'a refused store degrades porter; a restart would not mend it');
      const report = JSON.parse(health.text) as {
        status: string;
        servers: Record<string, unknown>;
        stores: Record<string, { status: string; servers: string[]; reason: string }>;
      };
      assert.equal(report.status, 'degraded');
      assert.equal(report.stores['eu-network']?.status, 'token-refused');
      assert.deepEqual(report.stores['eu-network']?.servers, ['eu-1']);
      assert.match(report.stores['eu-network']?.reason ?? '', /401 INVALID_INTEGRATION_TOKEN/);
      assert.equal(report.stores.default?.status, 'ok');
      assert.deepEqual(Object.keys(report.servers), ['itest'], 'the stopped server no longer runs');
      const metrics = (await get(port, '/metrics')).text;
      assert.equal(metric(metrics, 'porter_store_token_refused{store="eu-network"}'), 1);
      assert.equal(metric(metrics, 'porter_store_token_refused{store="default"}'), 0);

      assert.equal(porter.events('store.refused').length, 1, 'the refusal is logged once');
      assert.equal(bed.api.commands().find((c) => c.command === 'say eu-2')?.status, 'SCHEDULED', 'the refused store claims nothing');
      assert.equal(porter.exit, undefined, porter.tail());

      bed.api.setToken(SIM_TOKEN, null);
      assert.deepEqual(await porter.waitExit(), { code: 78, signal: null }, porter.tail());
      const last = porter.events('store.refused', (line) => line.store === 'default');
      assert.equal(last.length, 1, porter.tail());
      assert.deepEqual([last[0]!.status, last[0]!.apiCode], [401, 'INVALID_INTEGRATION_TOKEN']);
      assert.match(last[0]!.msg ?? '', /no other store is left to deliver for/);
      const fatal = porter.events('store.fatal');
      assert.equal(fatal.length, 1, porter.tail());
      assert.deepEqual(new Set(fatal[0]!.stores as string[]), new Set(['default', 'eu-network']), 'both stores are named');
      assert.match(fatal[0]!.msg ?? '', /configuration or credentials rejected: fix the configuration and start again/);
      assertNoSecret(porter, join(bed.dir, 'state'), [SIM_TOKEN, EU_TOKEN, RCON_PASSWORD]);
    } finally {
      await bed.close();
      await euGame.close();
    }
  });

  test('a reload with a new token file starts the refused store again, and adds a store with its server', async () => {
    const NEW_EU_TOKEN = 'gci_eu_network_NEW_q1w2e3r4t5';
    const ASIA_SERVER_ID = '3d6a4adc-4fc3-43f4-8a5e-2238f5eec649';
    const ASIA_TOKEN = 'gci_asia_K9j8h7g6f5d4';
    const bed = await startBed({
      api: {
        tokens: { [SIM_TOKEN]: SCOPES, [EU_TOKEN]: SCOPES, [ASIA_TOKEN]: SCOPES },
        servers: [SIM_SERVER_ID, EU_SERVER_ID, ASIA_SERVER_ID],
      },
    });
    const euGame = await startRconServer({ password: RCON_PASSWORD, flavour: 'minecraft', players: ['Steve'] });
    try {
      writeFileSync(join(bed.dir, 'eu-token'), `${EU_TOKEN}\n`, { mode: 0o600 });
      const stores: Record<string, unknown> = { 'eu-network': { baseUrl: bed.api.url, tokenFile: './eu-token' } };
      const write = () =>
        bed.writeConfig((config) => {
          const home = config.servers[0]!;
          config.servers.push({
            ...home,
            id: EU_SERVER_ID,
            name: 'eu-1',
            store: 'eu-network',
            executor: { ...home.executor, port: euGame.port },
          });
          if (stores.asia) config.servers.push({ ...home, id: ASIA_SERVER_ID, name: 'asia-1', store: 'asia' });
          Object.assign(config, { stores, health: { listen: '127.0.0.1:0' } });
        });
      write();
      const porter = bed.spawnPorter();
      const port = (await porter.waitForEvent('health.listening')).port as number;
      await porter.waitForEvent('porter.started');
      bed.api.setToken(EU_TOKEN, null);
      await porter.waitForEvent('store.refused', euRefused);
      bed.api.enqueue(EU_SERVER_ID, { command: 'say eu-after-new-token' });

      // The owner makes a new token, writes it into the store's file and adds a store.
      bed.api.setToken(NEW_EU_TOKEN, SCOPES);
      writeFileSync(join(bed.dir, 'eu-token'), `${NEW_EU_TOKEN}\n`, { mode: 0o600 });
      stores.asia = { baseUrl: bed.api.url, token: ASIA_TOKEN };
      write();
      bed.api.enqueue(ASIA_SERVER_ID, { command: 'say asia-1' });
      porter.kill('SIGHUP');
      const reloaded = await porter.waitForEvent('reload.done');
      // What changed is told in the message: an operator reads it there.
      assert.match(String(reloaded.msg), /stores added asia; a new API token for store eu-network/);

      await waitFor(
        () =>
          ['say eu-after-new-token', 'say asia-1'].every(
            (text) => bed.api.commands().find((c) => c.command === text)?.status === 'EXECUTED',
          ),
        {
          ...WAIT,
          what: 'the restarted store and the added one deliver',
        },
      );
      assert.deepEqual(
        euGame.executed.filter((e) => !e.query).map((e) => e.command),
        ['say eu-after-new-token'],
      );
      const report = JSON.parse((await get(port, '/healthz')).text) as { status: string; stores: Record<string, { status: string }> };
      assert.equal(report.status, 'ok');
      assert.deepEqual(Object.fromEntries(Object.entries(report.stores).map(([name, store]) => [name, store.status])), {
        default: 'ok',
        'eu-network': 'ok',
        asia: 'ok',
      });
      assert.equal(metric((await get(port, '/metrics')).text, 'porter_store_token_refused{store="eu-network"}'), 0);
      porter.kill('SIGTERM');
      assert.deepEqual(await porter.waitExit(), { code: 0, signal: null }, porter.tail());
      assertNoSecret(porter, join(bed.dir, 'state'), [SIM_TOKEN, EU_TOKEN, NEW_EU_TOKEN, ASIA_TOKEN, RCON_PASSWORD]);
    } finally {
      await bed.close();
      await euGame.close();
    }
  });

  test("a named store's token rotated in its file is picked up on the first 401: no refusal, its server keeps delivering", async () => {
    const ROTATED = 'gci_eu_network_ROTATED_a1s2d3f4';
    const bed = await startBed({ api: { tokens: { [SIM_TOKEN]: SCOPES, [EU_TOKEN]: SCOPES }, servers: [SIM_SERVER_ID, EU_SERVER_ID] } });
    try {
      writeFileSync(join(bed.dir, 'eu-token'), `${EU_TOKEN}\n`, { mode: 0o600 });
      bed.writeConfig((config) => {
        config.servers.push({ ...config.servers[0]!, id: EU_SERVER_ID, name: 'eu-1', store: 'eu-network' });
        Object.assign(config, { stores: { 'eu-network': { baseUrl: bed.api.url, tokenFile: './eu-token' } } });
      });
      bed.api.enqueue(EU_SERVER_ID, { command: 'say eu-before' });
      const porter = bed.spawnPorter();
      await waitFor(() => bed.api.commands()[0]!.status === 'EXECUTED', { ...WAIT, what: 'the first eu delivery' });
      bed.api.setToken(ROTATED, SCOPES);
      writeFileSync(join(bed.dir, 'eu-token'), `${ROTATED}\n`, { mode: 0o600 });
      bed.api.setToken(EU_TOKEN, null);
      bed.api.enqueue(EU_SERVER_ID, { command: 'say eu-after' });
      await waitFor(() => bed.api.commands().find((c) => c.command === 'say eu-after')?.status === 'EXECUTED' || porter.exit, {
        ...WAIT,
        what: 'the delivery with the rotated token',
      });
      await porter.waitForEvent('api.token.reread');
      assert.equal(porter.events('store.refused').length, 0, porter.tail());
      porter.kill('SIGTERM');
      assert.deepEqual(await porter.waitExit(), { code: 0, signal: null }, porter.tail());
      assertNoSecret(porter, join(bed.dir, 'state'), [SIM_TOKEN, EU_TOKEN, ROTATED, RCON_PASSWORD]);
    } finally {
      await bed.close();
    }
  });

  test("another store's token echoed by a game server is scrubbed from the fail reason, the journal, the history and the logs", async () => {
    const bed = await startBed({ api: { tokens: { [SIM_TOKEN]: SCOPES, [EU_TOKEN]: SCOPES }, servers: [SIM_SERVER_ID, EU_SERVER_ID] } });
    try {
      writeFileSync(join(bed.dir, 'eu-token'), `${EU_TOKEN}\n`, { mode: 0o600 });
      bed.writeConfig((config) => {
        config.servers.push({ ...config.servers[0]!, id: EU_SERVER_ID, name: 'eu-1', store: 'eu-network' });
        Object.assign(config, { stores: { 'eu-network': { baseUrl: bed.api.url, tokenFile: './eu-token' } } });
      });
      const { reason, porter } = await failedWithAnswer(bed, `Unknown or incomplete command: ${EU_TOKEN} / ${SIM_TOKEN}`);
      assert.match(reason, /Unknown or incomplete command: \[Redacted\] \/ \[Redacted\]/);
      assertNoSecret(porter, join(bed.dir, 'state'), [SIM_TOKEN, EU_TOKEN, RCON_PASSWORD]);
    } finally {
      await bed.close();
    }
  });

  test('porter check proves each token once and names its store; no token printed', async () => {
    const bed = await startBed({ api: { tokens: { [SIM_TOKEN]: SCOPES, [EU_TOKEN]: SCOPES }, servers: [SIM_SERVER_ID, EU_SERVER_ID] } });
    try {
      writeFileSync(join(bed.dir, 'eu-token'), `${EU_TOKEN}\n`, { mode: 0o600 });
      bed.writeConfig((config) => {
        config.servers.push({ ...config.servers[0]!, id: EU_SERVER_ID, name: 'eu-1', store: 'eu-network' });
        Object.assign(config, {
          stores: {
            'eu-network': { baseUrl: bed.api.url, tokenFile: './eu-token' },
            'eu-mirror': { baseUrl: bed.api.url, tokenFile: './eu-token' },
          },
        });
      });
      bed.api.setToken(SIM_TOKEN, null);
      const check = bed.spawnPorter({ args: ['check', '-c', bed.configPath] });
      assert.deepEqual(await check.waitExit(), { code: 78, signal: null }, check.tail());
      assert.match(check.stdout, /^✖ store "default": API: Seller API rejected the token \(401 INVALID_INTEGRATION_TOKEN\)/m);
      assert.match(
        check.stdout,
        /^✔ stores "eu-network", "eu-mirror": API token accepted by http:\/\/127\.0\.0\.1:\d+ \(2 servers in the store\)$/m,
      );
      assert.equal(bed.api.requests.filter((r) => r.route === 'servers').length, 2, 'one call per distinct token');
      for (const secret of [SIM_TOKEN, EU_TOKEN, RCON_PASSWORD]) assert.ok(!check.output.includes(secret));
    } finally {
      await bed.close();
    }
  });
});
