import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import { Pool } from 'undici';
import { createApiClient, type ApiClient, type ApiOrigin, type ApiRequest } from '../../../src/api/wire/client.js';
import { ConnectionShare } from '../../../src/api/wire/connection-share.js';
import { ApiTransportError } from '../../../src/api/errors.js';
import { SIM_SERVER_ID, SIM_TOKEN, startSellerApi, type FakeSellerApi } from '../../../src/sim/faults/seller-api.js';
import { FakeClock } from '../../helpers/fake-clock.js';
import { waitFor } from '../../helpers/wait-for.js';
import { apiConfig, silent } from '../helpers.js';

/**
 * Stores sharing one API origin share its connections fairly, and a request's deadline counts
 * from when it is sent (docs/design.md#many-stores). The simulated API holds the answers of a
 * "slow store" on its own fake clock, so a call stays in flight exactly until the test lets it
 * end; porter's deadlines run on another fake clock, moved by the test while requests wait.
 */

const SMALL_TOKEN = 'gci_small_store_0123456789';
const SMALL_SERVER = '2c5f39cb-3fb2-42e3-994f-1127e4ddb538';
const HELD_MS = 60_000;

describe('connections of one origin, shared by stores', () => {
  let api: FakeSellerApi;
  let apiClock: FakeClock;
  const clients: ApiClient[] = [];
  const origins: ApiOrigin[] = [];

  before(async () => {
    apiClock = new FakeClock();
    api = await startSellerApi({
      tokens: { [SIM_TOKEN]: ['commands:execute'], [SMALL_TOKEN]: ['commands:execute'] },
      servers: [SIM_SERVER_ID, SMALL_SERVER],
      clock: apiClock,
    });
  });
  afterEach(async () => {
    // Lets every held answer go, so nothing is left in flight.
    api.clearFaults();
    apiClock.advance(HELD_MS);
    await Promise.all(clients.splice(0).map((client) => client.close()));
    await Promise.all(origins.splice(0).map((origin) => origin.pool.close()));
  });
  after(() => api.close());

  function origin(connections: number): ApiOrigin {
    const made = { pool: new Pool(api.url, { connections, headersTimeout: 0, bodyTimeout: 0 }), share: new ConnectionShare(connections) };
    origins.push(made);
    return made;
  }

  function client(shared: ApiOrigin, store: string, token: string, clock: FakeClock, timeoutMs = 30_000): ApiClient {
    const made = createApiClient(apiConfig(api.url, { token, timeoutMs }), { logger: silent(), origin: shared, store, clock });
    clients.push(made);
    return made;
  }

  const pull = (serverId: string, extra: Partial<ApiRequest> = {}): ApiRequest => ({
    method: 'POST',
    path: `/v1/seller/servers/${serverId}/commands/pull`,
    json: { onlineIdentifiers: [] },
    context: { route: 'pull', serverId },
    ...extra,
  });

  const arrived = (serverId: string) => api.requests.filter((r) => r.serverId === serverId).length;

  test('a store whose API answers slowly cannot take the last connection another store needs', async () => {
    const shared = origin(2);
    const clock = new FakeClock();
    const big = client(shared, 'big', SIM_TOKEN, clock);
    const small = client(shared, 'small', SMALL_TOKEN, clock);
    api.inject('pull', { delay: HELD_MS }, { serverId: SIM_SERVER_ID, times: Number.POSITIVE_INFINITY });
    const before = arrived(SIM_SERVER_ID);
    const slow = [big.send(pull(SIM_SERVER_ID)), big.send(pull(SIM_SERVER_ID)), big.send(pull(SIM_SERVER_ID))];
    await waitFor(() => arrived(SIM_SERVER_ID) > before || api.inFlight > 0, { what: "the big store's first call on the wire" });
    // The small store's pull is answered while the big store's calls are all still held.
    const answer = await small.send(pull(SMALL_SERVER));
    assert.equal(answer.status, 204);
    assert.equal(api.inFlight, 1, 'the big store holds one connection; the other stayed the small store’s');
    api.clearFaults();
    apiClock.advance(HELD_MS);
    assert.deepEqual(
      (await Promise.all(slow)).map((r) => r.status),
      [204, 204, 204],
    );
  });

  test('a request that waited for a connection is not timed out for the wait: its deadline starts when it is sent', async () => {
    const shared = origin(1);
    const clock = new FakeClock();
    const one = client(shared, 'default', SIM_TOKEN, clock, 1_000);
    api.inject('pull', { delay: HELD_MS }, { serverId: SIM_SERVER_ID, times: 1 });
    const first = one.send(pull(SIM_SERVER_ID)).then(
      () => 'answered',
      (error: unknown) => error,
    );
    await waitFor(() => api.inFlight === 1, { what: 'the first call held by the API' });
    const second = one.send(pull(SMALL_SERVER));
    // Far past the deadline: the first call, sent, times out; the second only waited and is sent now.
    clock.advance(5_000);
    const timedOut = await first;
    assert.ok(timedOut instanceof ApiTransportError && timedOut.failure === 'timeout' && timedOut.maybeProcessed, String(timedOut));
    assert.equal((await second).status, 204);
  });

  test('a request abandoned while it waited for a connection was never sent: no transport error, the API never saw it', async () => {
    const shared = origin(1);
    const clock = new FakeClock();
    const one = client(shared, 'default', SIM_TOKEN, clock);
    api.inject('pull', { delay: HELD_MS }, { serverId: SIM_SERVER_ID, times: 1 });
    const first = one.send(pull(SIM_SERVER_ID));
    await waitFor(() => api.inFlight === 1, { what: 'the first call held by the API' });
    const seen = arrived(SMALL_SERVER);
    const stop = new AbortController();
    let checked = 0;
    const waiting = one.send(pull(SMALL_SERVER, { signal: stop.signal, beforeSend: () => checked++ }));
    stop.abort(new Error('porter is stopping'));
    await assert.rejects(
      waiting,
      (error: unknown) => !(error instanceof ApiTransportError) && (error as Error).message === 'porter is stopping',
    );
    assert.equal(checked, 0, 'never reached the send');
    apiClock.advance(HELD_MS);
    await first;
    assert.equal(arrived(SMALL_SERVER), seen);
  });

  test('beforeSend runs once the connection is there, after the wait, and what it throws withholds the request', async () => {
    const shared = origin(1);
    const clock = new FakeClock();
    const one = client(shared, 'default', SIM_TOKEN, clock);
    api.inject('pull', { delay: HELD_MS }, { serverId: SIM_SERVER_ID, times: 1 });
    const first = one.send(pull(SIM_SERVER_ID));
    await waitFor(() => api.inFlight === 1, { what: 'the first call held by the API' });
    const seen = arrived(SMALL_SERVER);
    let gateOpen = true;
    let asked = 0;
    const waiting = one.send(
      pull(SMALL_SERVER, {
        beforeSend: () => {
          asked++;
          if (!gateOpen) throw new Error('withheld: the gate shut while it waited');
        },
      }),
    );
    gateOpen = false;
    assert.equal(asked, 0);
    apiClock.advance(HELD_MS);
    await first;
    await assert.rejects(waiting, /withheld: the gate shut while it waited/);
    assert.equal(asked, 1);
    assert.equal(arrived(SMALL_SERVER), seen);
  });
});
