import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { waitFor } from '../helpers/wait-for.js';
import {
  acceptedReports,
  isSettled,
  SIM_SERVER_ID,
  startBed,
  WAIT,
  type PorterConfig,
  type PorterProcess,
  type TestBed,
} from './harness.js';

/**
 * Frozen and thawed (docs/design.md#frozen-and-thawed): porter is stopped (SIGSTOP, as a paused
 * VM or container, `docker pause` or a long GC pause would) while an exchange is in flight, the
 * other side answers meanwhile, and porter stays frozen well past every timeout before SIGCONT.
 * At the thaw the expired deadline and the answer are ready together; the answer must win: the
 * claim is run once and reported done once, and nothing is "outcome unknown".
 */

/** api.timeoutMs and the executor's timeoutMs. */
const TIMEOUT_MS = 1500;
/** Frozen at least this long: every deadline of the exchange has expired by the thaw. */
const FROZEN_MS = TIMEOUT_MS + 1500;
/** How long the far side holds its answer: porter is frozen long before it comes. */
const HOLD_MS = 1000;

function shortTimeouts(config: PorterConfig): void {
  config.api.timeoutMs = TIMEOUT_MS;
  config.servers[0]!.executor.timeoutMs = TIMEOUT_MS;
}

/**
 * Freezes porter now (the caller checked that the answer has not come yet), waits until the far
 * side has answered (`answered`) and FROZEN_MS have passed, then thaws it.
 */
async function freezeThrough(porter: PorterProcess, answered: () => boolean, what: string): Promise<void> {
  await porter.freeze();
  const frozenAt = Date.now();
  await waitFor(answered, { ...WAIT, what });
  // A deliberate wait: the length of the freeze is the point of the test.
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, frozenAt + FROZEN_MS - Date.now())));
  porter.thaw();
}

/** What every scenario ends with: the one command ran once, was reported done once, nothing was unknown. */
async function assertDeliveredOnce(bed: TestBed, porter: PorterProcess, id: string, command: string): Promise<void> {
  // Porter's own word: the delivery's end, or the failed exchange that keeps it from ending.
  const ended = ['delivery.done', 'delivery.failed', 'pull.failed', 'report.retry'];
  await waitFor(() => porter.lines.some((line) => ended.includes(line.event ?? '')) || porter.exit, {
    ...WAIT,
    what: 'porter to deliver the command',
  });
  const settled = bed.api.commands().find((c) => c.id === id)!;
  assert.ok(isSettled(settled.status), `${JSON.stringify(settled)}\n${porter.tail()}`);
  assert.equal(settled.status, 'EXECUTED', `${JSON.stringify(settled)}\n${porter.tail()}`);
  assert.equal(settled.claims, 1);
  assert.equal(settled.doneCalls, 1, 'reported done exactly once');
  assert.equal(acceptedReports(settled), 1);
  assert.equal(bed.ranCount(command), 1, 'the game ran it exactly once');
  const troubles = ['pull.failed', 'report.retry', 'report.settled', 'delivery.failed'];
  assert.deepEqual(
    porter.lines.filter((line) => troubles.includes(line.event ?? '')),
    [],
    porter.tail(),
  );
  assert.ok(!/outcome unknown/i.test(porter.stdout), porter.tail());
  assert.equal(porter.events('delivery.done').length, 1, porter.tail());
}

describe('frozen and thawed, through the real CLI: an answer that arrived while porter was frozen wins over its deadline', () => {
  test('a pull in flight: the claim it carries is run and reported done, not left PROCESSING on the platform', async () => {
    const bed = await startBed();
    try {
      bed.writeConfig(shortTimeouts);
      const command = 'say frozen-pull';
      const id = bed.api.enqueue(SIM_SERVER_ID, { command });
      bed.api.inject('pull', { delay: HOLD_MS });
      const porter = bed.spawnPorter();
      // The sim records a request once it answered: in flight with none recorded is the first pull, held.
      const pullAnswered = () => bed.api.requests.some((r) => r.route === 'pull');
      await waitFor(() => (bed.api.inFlight > 0 && !pullAnswered()) || porter.exit, { ...WAIT, what: 'the first pull to reach the sim' });
      assert.equal(porter.exit, undefined, porter.tail());
      await freezeThrough(porter, pullAnswered, 'the sim to answer the pull');
      const [pull] = bed.api.requests;
      assert.equal(pull?.fault, `delay ${HOLD_MS} ms`);
      assert.equal(pull?.status, 200, 'the held pull claimed the command');
      await assertDeliveredOnce(bed, porter, id, command);
    } finally {
      await bed.close();
    }
  });

  test('a command in flight: the game answered while porter was frozen, so it ran and is reported done, not "outcome unknown"', async () => {
    const bed = await startBed();
    try {
      bed.writeConfig(shortTimeouts);
      // The game sim holds its answer to this one for HOLD_MS.
      const command = `porter-sim delay ${HOLD_MS} frozen-command`;
      const id = bed.api.enqueue(SIM_SERVER_ID, { command });
      const porter = bed.spawnPorter();
      const ran = () => bed.rcon.executed.find((e) => e.command === command);
      await waitFor(() => ran() || porter.exit, { ...WAIT, what: 'the command to reach the game server' });
      assert.equal(porter.exit, undefined, porter.tail());
      assert.equal(ran()!.answeredAt, undefined, 'the game answered before porter froze');
      await freezeThrough(porter, () => ran()!.answeredAt !== undefined, 'the game sim to answer');
      await assertDeliveredOnce(bed, porter, id, command);
    } finally {
      await bed.close();
    }
  });

  test('a report in flight: it was accepted while porter was frozen, so it is not sent again', async () => {
    const bed = await startBed();
    try {
      bed.writeConfig(shortTimeouts);
      const command = 'say frozen-report';
      const id = bed.api.enqueue(SIM_SERVER_ID, { command });
      bed.api.inject('done', { delay: HOLD_MS });
      const porter = bed.spawnPorter();
      const reportAnswered = () => bed.api.requests.some((r) => r.route === 'done');
      // Porter reports before it pulls again: once the command ran, the request in flight is the report.
      await waitFor(() => (bed.ranCount(command) === 1 && bed.api.inFlight > 0 && !reportAnswered()) || porter.exit, {
        ...WAIT,
        what: 'the report to reach the sim',
      });
      assert.equal(porter.exit, undefined, porter.tail());
      await freezeThrough(porter, reportAnswered, 'the sim to answer the report');
      await assertDeliveredOnce(bed, porter, id, command);
      assert.deepEqual(
        bed.api.requests.filter((r) => r.route === 'done').map((r) => r.status),
        [200],
        'one report, accepted, never sent again',
      );
    } finally {
      await bed.close();
    }
  });
});
