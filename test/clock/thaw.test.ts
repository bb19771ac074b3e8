import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { performance } from 'node:perf_hooks';
import { after, before, describe, test } from 'node:test';
import { pino } from 'pino';
import { createApiClient } from '../../src/api/wire/client.js';
import { ApiTransportError } from '../../src/api/errors.js';
import { startDeadline, systemClock, type Clock } from '../../src/clock.js';
import { OutcomeUnknownError } from '../../src/errors.js';
import { RconConnection } from '../../src/protocols/rcon/connection.js';
import { RequestUnanswered, TShockHttp } from '../../src/protocols/tshock/http.js';
import { WebRconExecutor } from '../../src/protocols/webrcon/executor.js';
import { apiConfig } from '../api/helpers.js';
import { freezeUntilAnswered, nextCheckPhase, startThawPeer, type ThawPeer, type ThawPeerKind } from '../helpers/thaw.js';
import { waitFor } from '../helpers/wait-for.js';

/**
 * Frozen and thawed (docs/design.md#frozen-and-thawed): the answer arrived while porter could not
 * run, and at the thaw its deadline has expired too. The answer must win. Each test blocks this
 * thread (see test/helpers/thaw.ts) from the moment the peer has the request until it has
 * answered and the deadline is well past, then lets the event loop go on: an expired timer and an
 * unread answer, ready at once, timers first. Each runs the same exchange with a clock whose
 * deadlines do not yield too (only `sleep`: a plain timer, as every deadline was before), to show
 * that the frozen state is really there: that deadline wins and the answer is lost.
 */

const silent = pino({ level: 'silent' });
const context = { id: '42', serverId: '1b4e28ba-2fa1-11d2-883f-0016d3cca427' };
const PULL_PATH = `/v1/seller/servers/${context.serverId}/commands/pull`;

/** A clock whose deadlines are plain timers. */
const plainTimers: Clock = { now: () => systemClock.now(), sleep: (ms, signal) => systemClock.sleep(ms, signal) };

type Outcome<T> = { value: T } | { error: Error };

/**
 * Runs `exchange(deadlineMs)`, waits until the peer has read its `requests`, then freezes this
 * thread until the peer has answered them and the deadline is past (it started before the peer
 * had the request); returns how the exchange ended. The freeze must begin after the request
 * reached the peer and before both the answer and the deadline: on a loaded machine a first try
 * may miss that, and runs again with a deadline twice as long.
 */
async function frozenWhileAnswered<T>(peer: ThawPeer, requests: number, exchange: (deadlineMs: number) => Promise<T>): Promise<Outcome<T>> {
  const missed: string[] = [];
  for (let deadlineMs = 200; deadlineMs <= 6400; deadlineMs *= 2) {
    peer.answerAfter(deadlineMs / 2);
    const received = peer.received();
    const answered = peer.answered();
    const since = performance.now();
    const outcome: Promise<Outcome<T>> = exchange(deadlineMs).then(
      (value) => ({ value }),
      (error: Error) => ({ error }),
    );
    if (await peer.waitReceived(received + requests, outcome)) {
      const receivedAt = performance.now();
      await nextCheckPhase();
      // The deadline started after `since`: it cannot have expired yet.
      const elapsed = performance.now() - since;
      if (peer.answered() === answered && elapsed < deadlineMs) {
        freezeUntilAnswered(peer, answered + requests, receivedAt, deadlineMs + 50);
        return outcome;
      }
      missed.push(`${deadlineMs} ms: the freeze began after ${Math.round(elapsed)} ms, answered ${peer.answered() - answered}`);
    } else {
      missed.push(`${deadlineMs} ms: the exchange ended before the peer had the request`);
    }
    await outcome;
    await waitFor(() => peer.answered() >= peer.received(), { what: 'the peer to answer what it read' });
  }
  assert.fail(`could not freeze between the request and its answer: ${missed.join('; ')}`);
}

function valueOf<T>(outcome: Outcome<T>): T {
  if ('error' in outcome) assert.fail(`the deadline won over the answer: ${outcome.error.message}`);
  return outcome.value;
}

function errorOf(outcome: Outcome<unknown>): Error {
  if (!('error' in outcome)) assert.fail('the exchange got its answer although the deadline did not yield');
  return outcome.error;
}

describe('a deadline yields to an answer that arrived while the process was frozen', () => {
  const peers = new Map<ThawPeerKind, ThawPeer>();
  before(async () => {
    const kinds = ['raw', 'http', 'rcon', 'webrcon'] as const;
    const started = await Promise.all(kinds.map((kind) => startThawPeer(kind)));
    kinds.forEach((kind, i) => peers.set(kind, started[i]!));
  });
  after(async () => {
    await Promise.all([...peers.values()].map((peer) => peer.close()));
  });

  test('startDeadline on a socket: the answer wins; a plain timer would have decided "no answer"', async () => {
    const peer = peers.get('raw')!;
    const ask = async (clock: Clock) => {
      const socket = connect(peer.port, '127.0.0.1');
      socket.on('error', () => undefined);
      await new Promise((resolve) => socket.once('connect', resolve));
      try {
        return await frozenWhileAnswered(
          peer,
          1,
          (deadlineMs) =>
            new Promise<string>((resolve, reject) => {
              const cancel = startDeadline(clock, deadlineMs, () => reject(new Error('deadline')));
              socket.once('data', (chunk: Buffer) => {
                cancel();
                resolve(chunk.toString('utf8'));
              });
              socket.write('ask');
            }),
        );
      } finally {
        socket.destroy();
      }
    };
    assert.equal(errorOf(await ask(plainTimers)).message, 'deadline');
    assert.equal(valueOf(await ask(systemClock)), 'answer');
  });

  test('RCON (stepWithin, as telnet): the command that ran is answered, not "outcome unknown"', async () => {
    const peer = peers.get('rcon')!;
    const run = async (clock: Clock) => {
      const options = { host: '127.0.0.1', port: peer.port, password: 'pw', flavour: 'minecraft', connectTimeoutMs: 10_000 } as const;
      let connection: RconConnection | undefined;
      try {
        return await frozenWhileAnswered(peer, 1, async (deadlineMs) => {
          connection?.destroy();
          connection = new RconConnection({ ...options, logger: silent, clock });
          await connection.open();
          return connection.request('give Steve diamond 1', deadlineMs);
        });
      } finally {
        connection?.destroy();
      }
    };
    assert.ok(errorOf(await run(plainTimers)) instanceof OutcomeUnknownError);
    assert.equal(valueOf(await run(systemClock)), 'Gave 1 [Diamond] to Steve');
  });

  test('Seller API client: the pull answer (and the claim in it) is read, not lost to porter or undici', async () => {
    const peer = peers.get('http')!;
    const pull = async (clock: Clock) => {
      const clients: Array<ReturnType<typeof createApiClient>> = [];
      try {
        return await frozenWhileAnswered(peer, 1, (deadlineMs) => {
          const client = createApiClient(apiConfig(`http://127.0.0.1:${peer.port}`, { timeoutMs: deadlineMs }), { logger: silent, clock });
          clients.push(client);
          return client.send({
            method: 'POST',
            path: PULL_PATH,
            json: { onlineIdentifiers: [] },
            context: { route: 'pull', serverId: context.serverId },
          });
        });
      } finally {
        await Promise.all(clients.map((client) => client.close()));
      }
    };
    const lost = errorOf(await pull(plainTimers));
    assert.ok(lost instanceof ApiTransportError, String(lost));
    const answer = valueOf(await pull(systemClock));
    assert.equal(answer.status, 200);
    assert.equal(answer.body, '{"id":7,"command":"say thawed"}');
  });

  test("TShock's REST API: the answer is read, not lost to porter's deadlines or undici's", async () => {
    const peer = peers.get('http')!;
    const get = async (clock: Clock) => {
      const http = new TShockHttp({ origin: `http://127.0.0.1:${peer.port}`, connectTimeoutMs: 10_000, clock, maxBodyBytes: 65_536 });
      try {
        return await frozenWhileAnswered(peer, 1, (deadlineMs) => http.get('/v3/server/rawcmd?cmd=%2Fgive', deadlineMs));
      } finally {
        await http.close();
      }
    };
    const lost = errorOf(await get(plainTimers));
    assert.ok(lost instanceof RequestUnanswered && lost.kind === 'timeout', String(lost));
    assert.equal(valueOf(await get(systemClock)).status, 200);
  });

  test('WebRCON: the command and its probe are answered, not "outcome unknown"', async () => {
    const peer = peers.get('webrcon')!;
    const run = async (clock: Clock) => {
      const executors: WebRconExecutor[] = [];
      try {
        // Two requests: the command and the probe porter sends right after it.
        return await frozenWhileAnswered(peer, 2, async (deadlineMs) => {
          const config = { type: 'webrcon', host: '127.0.0.1', port: peer.port, password: 'pw', connectTimeoutMs: 10_000 } as const;
          const rcon = new WebRconExecutor({ ...config, timeoutMs: deadlineMs }, { logger: silent, clock });
          executors.push(rcon);
          await rcon.connect();
          return rcon.execute('inventory.giveto Steve rifle.ak 1', context);
        });
      } finally {
        await Promise.all(executors.map((rcon) => rcon.close()));
      }
    };
    assert.ok(errorOf(await run(plainTimers)) instanceof OutcomeUnknownError);
    assert.match(valueOf(await run(systemClock)), /^answer \d+$/);
  });

  test("undici's own headers and body timeouts never decide: porter's deadline, which yields, is the only one", async () => {
    // undici's timeouts run on timers of their own that never yield to a socket. Were they on (at
    // timeoutMs), they would destroy the socket long before this answer: undici checks them
    // every 499 ms, so a 300 ms one is due within about a second. With porter's deadline pushed
    // well past the answer, only an undici timeout could lose it.
    const peer = peers.get('http')!;
    const answerMs = 2000;
    peer.answerAfter(answerMs);
    const timeoutMs = 300;
    const later: Clock = { ...systemClock, setTimer: (fn, ms) => systemClock.setTimer!(fn, ms + answerMs + 20_000) };
    const client = createApiClient(apiConfig(`http://127.0.0.1:${peer.port}`, { timeoutMs }), { logger: silent, clock: later });
    const http = new TShockHttp({ origin: `http://127.0.0.1:${peer.port}`, connectTimeoutMs: 10_000, clock: later, maxBodyBytes: 65_536 });
    try {
      const answer = await client.send({
        method: 'POST',
        path: PULL_PATH,
        json: { onlineIdentifiers: [] },
        context: { route: 'pull', serverId: context.serverId },
      });
      assert.equal(answer.status, 200);
      assert.equal((await http.get('/v3/server/rawcmd?cmd=%2Fgive', timeoutMs)).status, 200);
    } finally {
      await Promise.all([client.close(), http.close()]);
    }
  });
});
