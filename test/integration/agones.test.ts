import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startAgonesSdk } from '../../src/sim/agones-sdk.js';
import { SIM_SERVER_ID, startBed, WAIT, type LogLine } from './harness.js';
import { waitFor } from '../helpers/wait-for.js';
import { freePort } from '../../bench/lib/free-port.js';

/**
 * porter as a sidecar of an Agones GameServer, through the real CLI against a simulated SDK
 * gateway (src/sim/agones-sdk.ts): AGONES_SDK_HTTP_PORT set as Agones sets it, the state moved
 * as Agones moves it.
 */

/** An `agones.state` line of this GameServer state. */
const inState = (state: string) => (line: LogLine) => line.state === state;

describe('Agones: porter follows the GameServer state', () => {
  test('nothing is claimed before Ready; Ready and Allocated deliver; Shutdown drains and exits 0', async () => {
    const sdk = await startAgonesSdk({ state: 'Scheduled' });
    const bed = await startBed();
    try {
      bed.writeConfig();
      const first = bed.api.enqueue(SIM_SERVER_ID, { command: 'give Steve diamond 1' });
      const porter = bed.spawnPorter({ env: { AGONES_SDK_HTTP_PORT: String(sdk.port) } });
      await porter.waitForEvent('agones.state', inState('Scheduled'));
      await porter.waitForEvent('porter.started');
      sdk.setState('RequestReady');
      await porter.waitForEvent('agones.state', inState('RequestReady'));
      sdk.setState('Unhealthy');
      await porter.waitForEvent('agones.state', inState('Unhealthy'));
      const pulls = () => bed.api.requests.filter((r) => r.route === 'pull').length;
      assert.equal(pulls(), 0, 'no pull while the GameServer is not Ready');
      assert.equal(bed.ranCount('give Steve diamond 1'), 0);

      sdk.setState('Ready');
      await waitFor(() => bed.api.commands().find((c) => c.id === first)?.status === 'EXECUTED' || porter.exit, {
        ...WAIT,
        what: 'the purchase delivered once Ready',
      });
      sdk.setState('Allocated');
      await porter.waitForEvent('agones.state', inState('Allocated'));
      const second = bed.api.enqueue(SIM_SERVER_ID, { command: 'give Steve diamond 2' });
      await waitFor(() => bed.api.commands().find((c) => c.id === second)?.status === 'EXECUTED' || porter.exit, {
        ...WAIT,
        what: 'a purchase delivered while Allocated',
      });

      sdk.setState('Shutdown');
      assert.deepEqual(await porter.waitExit(), { code: 0, signal: null }, porter.tail());
      assert.equal(porter.events('agones.state', inState('Shutdown')).length, 1, porter.tail());
      assert.equal(bed.ranCount('give Steve diamond 1'), 1);
      assert.equal(bed.ranCount('give Steve diamond 2'), 1);
    } finally {
      await bed.close();
      await sdk.close();
    }
  });

  test('a pull that waits for its budget when the GameServer leaves Ready is not sent; it goes once Ready again', async () => {
    const sdk = await startAgonesSdk({ state: 'Ready' });
    const bed = await startBed({ api: { budget: { perWindow: 2, windowMs: 8_000 } } });
    try {
      bed.writeConfig((config) => {
        config.api.budget = { perWindow: 2, windowMs: 8_000 };
        config.log.level = 'debug';
      });
      const ids = ['say budget-1', 'say budget-2', 'say budget-3'].map((command) => bed.api.enqueue(SIM_SERVER_ID, { command }));
      const porter = bed.spawnPorter({ env: { AGONES_SDK_HTTP_PORT: String(sdk.port) } });
      // Two claims spend the window; the third pull waits seconds for the budget: the gate shuts then.
      await porter.waitForEvent('pull.budget.wait');
      const pullsBefore = bed.api.requests.filter((r) => r.route === 'pull').length;
      sdk.setState('Unhealthy');
      await porter.waitForEvent('pull.withheld');
      assert.equal(bed.api.requests.filter((r) => r.route === 'pull').length, pullsBefore, 'no pull while Unhealthy');
      assert.equal(bed.api.commands().find((c) => c.id === ids[2])!.status, 'SCHEDULED');
      sdk.setState('Ready');
      await waitFor(() => bed.api.commands().every((c) => c.status === 'EXECUTED') || porter.exit, {
        ...WAIT,
        what: 'the third delivered once Ready',
      });
      porter.kill('SIGTERM');
      assert.deepEqual(await porter.waitExit(), { code: 0, signal: null }, porter.tail());
    } finally {
      await bed.close();
      await sdk.close();
    }
  });

  test('an SDK sidecar that starts after porter, and a watch stream that drops, are waited for', async () => {
    const port = await freePort();
    const bed = await startBed();
    let sdk: Awaited<ReturnType<typeof startAgonesSdk>> | undefined;
    try {
      bed.writeConfig();
      const id = bed.api.enqueue(SIM_SERVER_ID, { command: 'give Steve emerald 1' });
      const porter = bed.spawnPorter({ env: { AGONES_SDK_HTTP_PORT: String(port) } });
      await porter.waitForEvent('agones.sdk.unreachable');
      await porter.waitForEvent('porter.started');
      assert.equal(bed.api.requests.filter((r) => r.route === 'pull').length, 0, 'no claim while no state is known');

      sdk = await startAgonesSdk({ state: 'Ready', port });
      await waitFor(() => bed.api.commands().find((c) => c.id === id)?.status === 'EXECUTED' || porter.exit, {
        ...WAIT,
        what: 'delivered once the SDK answered Ready',
      });
      await porter.waitForEvent('agones.sdk.back');

      const reads = sdk.requests.filter((path) => path === '/gameserver').length;
      sdk.dropWatchers();
      await waitFor(() => (sdk!.requests.filter((path) => path === '/gameserver').length > reads && sdk!.watchers > 0) || porter.exit, {
        ...WAIT,
        what: 'porter watching again after the stream dropped',
      });
      sdk.setState('Shutdown');
      assert.deepEqual(await porter.waitExit(), { code: 0, signal: null }, porter.tail());
    } finally {
      await bed.close();
      await sdk?.close();
    }
  });

  test('an AGONES_SDK_HTTP_PORT that is not a port is a configuration error naming it', async () => {
    const bed = await startBed();
    try {
      bed.writeConfig();
      const porter = bed.spawnPorter({ env: { AGONES_SDK_HTTP_PORT: 'ninety' } });
      assert.deepEqual(await porter.waitExit(), { code: 78, signal: null }, porter.tail());
      assert.match(porter.stderr, /AGONES_SDK_HTTP_PORT is "ninety", not a port/);
    } finally {
      await bed.close();
    }
  });
});
