import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, test } from 'node:test';
import { pino } from 'pino';
import type { PullResult, ReportResult, ServerApi } from '../../src/api/types.js';
import { systemClock } from '../../src/clock.js';
import { ClaimGate } from '../../src/agones/gate.js';
import { Journal } from '../../src/delivery/journal/journal.js';
import { DeliveryLoop } from '../../src/delivery/loop.js';
import type { Executor } from '../../src/protocols/executor.js';
import { waitFor } from '../helpers/wait-for.js';

/**
 * Gates are asked again after every wait (docs/design.md#lifecycle): a pull waits for its budget
 * and for a connection inside the API client, and whatever decided "may I claim" before that wait
 * (the Agones state, the game server's connection, a stop, a reload removing the server) may have
 * changed by the time it would be sent. The API here holds each pull at that point, as the budget
 * or a busy connection pool does, until the test lets it go.
 */

const serverId = '1b4e28ba-2fa1-11d2-883f-0016d3cca427';
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A pull waits at the send until `release()`; then `beforeSend` decides, as the real client does. */
class HeldApi implements ServerApi {
  readonly serverId = serverId;
  sent = 0;
  withheld: string[] = [];
  waiting = 0;
  readonly reports: string[] = [];
  queue: PullResult[] = [];
  #release: Array<() => void> = [];

  async pull(_online: readonly string[], _signal?: AbortSignal, beforeSend?: () => void): Promise<PullResult> {
    this.waiting++;
    await new Promise<void>((resolve) => this.#release.push(resolve));
    this.waiting--;
    try {
      beforeSend?.();
    } catch (error) {
      this.withheld.push((error as Error).message);
      throw error;
    }
    this.sent++;
    return this.queue.shift() ?? { kind: 'empty', status: 204 };
  }

  release(): void {
    for (const go of this.#release.splice(0)) go();
  }

  async done(id: string): Promise<ReportResult> {
    this.reports.push(id);
    return 'accepted';
  }

  async fail(id: string): Promise<ReportResult> {
    this.reports.push(id);
    return 'accepted';
  }
}

function executor(): Executor & { ready: boolean; ran: string[] } {
  const waiters = new Set<() => void>();
  let ready = true;
  return {
    connectedText: 'a scripted game server',
    ran: [] as string[],
    get ready() {
      return ready;
    },
    set ready(value: boolean) {
      ready = value;
      if (!value) return;
      for (const wake of waiters) wake();
      waiters.clear();
    },
    async connect() {},
    isReady: () => ready,
    async waitReady(signal?: AbortSignal) {
      if (ready) return;
      await new Promise<void>((resolve, reject) => {
        waiters.add(resolve);
        signal?.addEventListener('abort', () => reject(signal.reason as Error), { once: true });
      });
    },
    async execute(command: string) {
      this.ran.push(command);
      return '';
    },
    async query() {
      return '';
    },
    stats: () => ({ connected: ready, reconnects: 0 }),
    async close() {},
  };
}

function setup() {
  const dir = mkdtempSync(join(tmpdir(), 'porter-gates-'));
  dirs.push(dir);
  const api = new HeldApi();
  const game = executor();
  const gate = new ClaimGate();
  gate.update('Ready');
  const loop = new DeliveryLoop({
    serverId,
    api,
    executor: game,
    players: { get: async () => [] },
    journal: new Journal(dir),
    policy: { check: () => ({ ok: true }) },
    failureIn: () => null,
    gate,
    idleDelay: () => 1,
    pullDelay: () => 0,
    notSentRetryMs: 1000,
    clock: systemClock,
    logger: pino({ level: 'silent' }),
  });
  const stop = new AbortController();
  const hard = new AbortController();
  const running = loop.run({ stop: stop.signal, hard: hard.signal });
  return { api, game, gate, stop, hard, running };
}

describe('the decision to claim is taken as the pull is sent, after every wait', () => {
  test('the GameServer leaves Ready while a pull waits: it is not sent; once Ready again, the next one is', async () => {
    const t = setup();
    await waitFor(() => t.api.waiting === 1, { what: 'a pull waiting to be sent' });
    t.gate.update('Unhealthy');
    t.api.queue.push({ kind: 'claimed', id: '7', command: 'give Steve diamond 1' });
    t.api.release();
    await waitFor(() => t.api.withheld.length === 1, { what: 'the pull withheld' });
    assert.equal(t.api.sent, 0);
    assert.match(t.api.withheld[0]!, /Agones GameServer is not Ready/);
    // Held at the gate now, not at the send: no pull waits while the state forbids claims.
    assert.equal(t.api.waiting, 0);
    t.gate.update('Allocated');
    await waitFor(() => t.api.waiting === 1, { what: 'a pull after the gate opened' });
    t.api.release();
    await waitFor(() => t.api.reports.length === 1, { what: 'the claim run and reported' });
    assert.deepEqual(t.game.ran, ['give Steve diamond 1']);
    t.stop.abort();
    t.api.release();
    await t.running;
  });

  test('the game server drops while a pull waits: it is not sent until the server is back', async () => {
    const t = setup();
    await waitFor(() => t.api.waiting === 1, { what: 'a pull waiting to be sent' });
    t.game.ready = false;
    t.api.release();
    await waitFor(() => t.api.withheld.length === 1, { what: 'the pull withheld' });
    assert.match(t.api.withheld[0]!, /game server is not connected/);
    assert.equal(t.api.sent, 0);
    assert.equal(t.api.waiting, 0);
    t.game.ready = true;
    await waitFor(() => t.api.waiting === 1, { what: 'a pull once the server is back' });
    t.stop.abort();
    t.api.release();
    await t.running;
    assert.equal(t.api.sent, 0, 'stopped before it was sent: not sent either');
  });

  test('a stop (SIGTERM, or a reload removing the server) while a pull waits: it is not sent and the loop ends', async () => {
    const t = setup();
    await waitFor(() => t.api.waiting === 1, { what: 'a pull waiting to be sent' });
    t.api.queue.push({ kind: 'claimed', id: '8', command: 'give Steve diamond 1' });
    t.stop.abort();
    t.api.release();
    await t.running;
    assert.equal(t.api.sent, 0);
    assert.match(t.api.withheld[0]!, /stopping/);
    assert.deepEqual(t.game.ran, []);
  });
});
