import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import fc from 'fast-check';
import { pino } from 'pino';
import { parseConfig } from '../../src/config/load.js';
import type { Config } from '../../src/config/schema.js';
import { runDaemon } from '../../src/daemon/daemon.js';
import { DAEMON_MOVES, type DaemonState } from '../../src/daemon/lifecycle.js';
import { startRconServer, type FakeRconServer } from '../../src/sim/faults/rcon-server.js';
import { SIM_SERVER_ID, SIM_TOKEN, startSellerApi, type FakeSellerApi } from '../../src/sim/seller-api.js';
import { fcOptions } from '../helpers/fc-options.js';
import { waitFor } from '../helpers/wait-for.js';

/**
 * The real daemon, in process, under any schedule of SIGHUPs (early, during start-up's logins,
 * during a reload's), stop signals (one, two, early, during a reload) and reloads that add and
 * remove a server whose login is slow: every state it takes is a move of DAEMON_MOVES (read from
 * its porter.state lines, each starting where the last one ended), and after the stop it always
 * ends stopped with exit 0. daemon.ts demanding a move out of order throws, and shows here as
 * exit 1 or a broken chain.
 */

const PASSWORD = 'rcon-moves-4410';
const OTHER_SERVER = '7d1f0c8e-5a2b-4c39-9e61-3f0a2b7c8d15';

type Event = { readonly afterMs: number; readonly kind: 'sighup' | 'stop' };
const schedule = fc.record({
  early: fc.constantFrom('none' as const, 'hangup' as const, 'stop' as const),
  events: fc.array(fc.record({ afterMs: fc.integer({ min: 0, max: 150 }), kind: fc.constantFrom('sighup' as const, 'stop' as const) }), {
    maxLength: 6,
  }),
  loginMs: fc.integer({ min: 0, max: 200 }),
});

let api: FakeSellerApi;
let game: FakeRconServer;
let slow: FakeRconServer;
before(async () => {
  api = await startSellerApi({ servers: [SIM_SERVER_ID, OTHER_SERVER] });
  game = await startRconServer({ password: PASSWORD, players: ['Steve'] });
  slow = await startRconServer({ password: PASSWORD, players: ['Steve'] });
});
after(async () => {
  slow.setLoginDelay(0);
  await Promise.all([api.close(), game.close(), slow.close()]);
});

function config(stateDir: string, servers: readonly FakeRconServer[]): Promise<Config> {
  const ids = [SIM_SERVER_ID, OTHER_SERVER];
  return parseConfig(
    {
      api: { baseUrl: api.url, token: SIM_TOKEN, timeoutMs: 30_000 },
      servers: servers.map((at, i) => ({
        id: ids[i],
        executor: { type: 'rcon', host: at.host, port: at.port, password: PASSWORD, connectTimeoutMs: 30_000, timeoutMs: 30_000 },
        players: { refreshMs: 100 },
      })),
      poll: { idleMs: 200 },
      stateDir,
      shutdown: { drainMs: 300 },
    },
    stateDir,
    {},
  );
}

async function play(run: { early: 'none' | 'hangup' | 'stop'; events: readonly Event[]; loginMs: number }): Promise<void> {
  slow.setLoginDelay(run.loginMs);
  const stateDir = mkdtempSync(join(tmpdir(), 'porter-moves-'));
  try {
    const moves: Array<{ from: DaemonState; to: DaemonState }> = [];
    const logger = pino(
      { level: 'debug' },
      {
        write: (line: string) => {
          const parsed = JSON.parse(line) as { event?: string; from: DaemonState; to: DaemonState };
          if (parsed.event === 'porter.state') moves.push({ from: parsed.from, to: parsed.to });
        },
      },
    );
    // Each reload flips between one server and both: the second's login is the slow one.
    let reloads = 0;
    const before = { hup: process.listeners('SIGHUP'), term: process.listeners('SIGTERM') };
    const exit = runDaemon({
      config: await config(stateDir, [game]),
      logger,
      reload: () => config(stateDir, ++reloads % 2 === 1 ? [game, slow] : [game]),
      earlySignals: () => ({ hangup: run.early === 'hangup', stop: run.early === 'stop' }),
      handleSignals: true,
    });
    // The signals come as the process delivers them, to the handlers porter installed (only those:
    // the test runner's own are left alone), with no signal sent to the process.
    let ended = false;
    const end = (): void => void (ended = true);
    exit.then(end, end);
    await waitFor(() => ended || process.listeners('SIGTERM').length > before.term.length, { what: "porter's signal handlers" });
    const hup = process.listeners('SIGHUP').filter((handler) => !before.hup.includes(handler));
    const term = process.listeners('SIGTERM').filter((handler) => !before.term.includes(handler));
    const send = (signal: 'SIGHUP' | 'SIGTERM'): void => {
      for (const handler of signal === 'SIGHUP' ? hup : term) handler(signal);
    };
    for (const event of run.events) {
      await sleep(event.afterMs);
      send(event.kind === 'stop' ? 'SIGTERM' : 'SIGHUP');
    }
    send('SIGTERM');
    assert.equal(await exit, 0, 'a stop ends with exit 0');
    let at: DaemonState = 'starting';
    for (const { from, to } of moves) {
      assert.equal(from, at, `porter.state ${from} → ${to} does not start where the last move ended (${at})`);
      assert.ok(DAEMON_MOVES[from].includes(to), `porter.state ${from} → ${to} is not in DAEMON_MOVES`);
      at = to;
    }
    assert.equal(at, 'stopped', `the daemon ended ${at}`);
  } finally {
    rmSync(stateDir, { recursive: true, force: true });
  }
}

test('any schedule of reloads and stops: only the moves of DAEMON_MOVES, and stopped with exit 0 after the stop', async () => {
  await fc.assert(fc.asyncProperty(schedule, play), fcOptions({ numRuns: 20 }));
});
