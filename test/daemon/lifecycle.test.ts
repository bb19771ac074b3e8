import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, test } from 'node:test';
import { pino } from 'pino';
import { parseConfig } from '../../src/config/load.js';
import type { Config } from '../../src/config/schema.js';
import { runDaemon } from '../../src/daemon/daemon.js';
import { startAgonesSdk } from '../../src/sim/agones-sdk.js';
import { startRconServer, type FakeRconServer } from '../../src/sim/faults/rcon-server.js';
import { SIM_SERVER_ID, SIM_TOKEN, startSellerApi, type FakeSellerApi } from '../../src/sim/seller-api.js';
import { waitFor } from '../helpers/wait-for.js';

/**
 * A stop at any moment of the daemon's lifecycle (docs/design.md#lifecycle), in process: while
 * the servers still log in (a game loading its world answers its console late), while a reload's
 * logins go on, before the daemon opened at all, and Agones' Shutdown during start-up. Each ends
 * in the drain bound and exit 0, where it used to wait for the logins, or forever.
 */

const PASSWORD = 'rcon-lifecycle-8812';
const OTHER_SERVER = '2c5f39cb-3fb2-42e3-994f-1127e4ddb538';
/** Far longer than the bound the tests assert: a login this slow is what a stop must not wait for. */
const LOGIN_MS = 120_000;
const DRAIN_MS = 1_000;
/** A fraction of the logins' time: the stop ended in the drain bound, not when the logins did. */
const STOP_BOUND_MS = 20_000;

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function world(): Promise<{ api: FakeSellerApi; game: FakeRconServer; slow: FakeRconServer; stateDir: string }> {
  const api = await startSellerApi({ servers: [SIM_SERVER_ID, OTHER_SERVER] });
  const game = await startRconServer({ password: PASSWORD, players: ['Steve'] });
  const slow = await startRconServer({ password: PASSWORD, players: ['Steve'] });
  slow.setLoginDelay(LOGIN_MS);
  const stateDir = mkdtempSync(join(tmpdir(), 'porter-lifecycle-'));
  cleanups.push(async () => {
    slow.setLoginDelay(0);
    await Promise.all([api.close(), game.close(), slow.close()]);
    rmSync(stateDir, { recursive: true, force: true });
  });
  return { api, game, slow, stateDir };
}

function server(id: string, game: FakeRconServer): Record<string, unknown> {
  return {
    id,
    executor: { type: 'rcon', host: game.host, port: game.port, password: PASSWORD, connectTimeoutMs: LOGIN_MS * 2, timeoutMs: 30_000 },
    players: { refreshMs: 100 },
  };
}

function config(
  api: FakeSellerApi,
  stateDir: string,
  servers: Array<Record<string, unknown>>,
  extra: Record<string, unknown> = {},
): Promise<Config> {
  return parseConfig(
    {
      api: { baseUrl: api.url, token: SIM_TOKEN, timeoutMs: 30_000 },
      servers,
      poll: { idleMs: 200 },
      stateDir,
      shutdown: { drainMs: DRAIN_MS },
      ...extra,
    },
    stateDir,
    {},
  );
}

const logger = pino({ level: 'silent' });

describe('a stop at any moment of the lifecycle', () => {
  test('while the game servers still answer their logins: exit 0 within the drain bound, nothing pulled', async () => {
    const { api, slow, stateDir } = await world();
    const stop = new AbortController();
    const started = Date.now();
    const exit = runDaemon({ config: await config(api, stateDir, [server(SIM_SERVER_ID, slow)]), logger, stopSignal: stop.signal });
    await waitFor(() => slow.connections > 0, { what: 'porter logging in' });
    stop.abort();
    assert.equal(await exit, 0);
    assert.ok(Date.now() - started < STOP_BOUND_MS, `stopped after ${Date.now() - started} ms`);
    assert.equal(api.requests.filter((r) => r.route === 'pull').length, 0);
  });

  test("while a reload's new server logs in: the login is abandoned, the running server drains, exit 0", async () => {
    const { api, game, slow, stateDir } = await world();
    const first = await config(api, stateDir, [server(SIM_SERVER_ID, game)]);
    const next = await config(api, stateDir, [server(SIM_SERVER_ID, game), server(OTHER_SERVER, slow)]);
    const stop = new AbortController();
    const exit = runDaemon({
      config: first,
      logger,
      stopSignal: stop.signal,
      reload: async () => next,
      // A SIGHUP that came while porter loaded: the reload runs once porter does.
      earlySignals: () => ({ hangup: true, stop: false }),
    });
    await waitFor(() => slow.connections > 0, { what: "the reload's login under way" });
    const stoppedAt = Date.now();
    stop.abort();
    assert.equal(await exit, 0);
    assert.ok(Date.now() - stoppedAt < STOP_BOUND_MS, `stopped after ${Date.now() - stoppedAt} ms`);
  });

  test('a stop that came while porter loaded: the daemon opens, connects to nothing and exits 0', async () => {
    const { api, game, stateDir } = await world();
    const exit = await runDaemon({
      config: await config(api, stateDir, [server(SIM_SERVER_ID, game)]),
      logger,
      earlySignals: () => ({ hangup: false, stop: true }),
    });
    assert.equal(exit, 0);
    assert.equal(game.totalConnections, 0);
    assert.equal(api.requests.length, 0);
  });

  test("Agones' Shutdown while the servers log in (a sidecar restarted into a GameServer shutting down): exit 0 within the bound", async () => {
    const { api, slow, stateDir } = await world();
    const sdk = await startAgonesSdk({ state: 'Shutdown' });
    cleanups.push(() => sdk.close());
    const started = Date.now();
    const exit = await runDaemon({ config: await config(api, stateDir, [server(SIM_SERVER_ID, slow)]), logger, agonesPort: sdk.port });
    assert.equal(exit, 0);
    assert.ok(Date.now() - started < STOP_BOUND_MS, `stopped after ${Date.now() - started} ms`);
    assert.equal(api.requests.filter((r) => r.route === 'pull').length, 0);
  });
});
