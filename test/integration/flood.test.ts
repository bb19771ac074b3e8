import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { waitFor } from '../helpers/wait-for.js';
import { FakeWebRconServer } from '../peers/webrcon-server.js';
import { isSettled, RCON_PASSWORD, SIM_SERVER_ID, startBed, WAIT, type PorterProcess, type TestBed } from './harness.js';

/**
 * "Unbounded answers": a game server that floods answer fragments for one command
 * and never ends the answer. Before the cap, porter's RSS grew past 1.3 GB over RCON and 951 MB
 * over WebRCON. Through the real CLI: memory stays bounded while the server floods, the command
 * is failed with the reason and never resent, and the next command is delivered on a fresh
 * connection.
 */

/** Well above porter's idle RSS (~80 MB) plus one capped answer, far below an unbounded flood. */
const RSS_BOUND_MB = 200;

interface Memory {
  readonly rssMb: number;
  /** The peak RSS of the process so far (VmHWM): what a sampler between two reads would miss. */
  readonly peakMb: number;
}

function memoryOf(pid: number): Memory | undefined {
  let status: string;
  try {
    status = readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return undefined;
  }
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return { rssMb: kb('VmRSS') / 1024, peakMb: kb('VmHWM') / 1024 };
}

/** Samples porter's memory until `until` settles; the highest peak seen is returned. */
async function peakWhile(porter: PorterProcess, until: Promise<unknown>): Promise<Memory> {
  let highest: Memory = { rssMb: 0, peakMb: 0 };
  let done = false;
  void until.finally(() => (done = true)).catch(() => undefined);
  while (!done) {
    const memory = memoryOf(porter.pid);
    if (memory && memory.peakMb > highest.peakMb) highest = memory;
    // A runaway is stopped long before it can hurt the machine the tests run on.
    if (memory && memory.rssMb > 4 * RSS_BOUND_MB) porter.kill('SIGKILL');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const last = memoryOf(porter.pid);
  return last && last.peakMb > highest.peakMb ? last : highest;
}

async function settled(bed: TestBed, porter: PorterProcess, id: string, what: string) {
  return waitFor(
    () => {
      const command = bed.api.commands().find((c) => c.id === id);
      if (command && isSettled(command.status)) return command;
      if (porter.exit) throw new Error(`porter exited (${JSON.stringify(porter.exit)}) before ${what}\n${porter.tail()}`);
      return undefined;
    },
    { ...WAIT, what },
  );
}

describe('a game server floods one answer, through the real CLI', () => {
  if (process.platform !== 'linux') {
    test('needs /proc to read the memory of porter', (t) => t.skip('not Linux: /proc/<pid>/status is unavailable'));
    return;
  }

  test('RCON: memory stays bounded, the command fails as too large, the next command is delivered', async (t) => {
    const bed = await startBed();
    try {
      bed.writeConfig();
      const porter = bed.spawnPorter();
      await porter.waitForEvent('connection.up');
      const idle = memoryOf(porter.pid)!;

      bed.rcon.failNext('flood');
      const { command, memory } = await deliverUnderFlood(bed, porter, 'say flood-me');

      assert.equal(command.status, 'FAILED', porter.tail());
      assert.match(String(command.error), /answer .*over porter's cap of 4 MiB/);
      assert.match(String(command.error), /outcome unknown/);
      assert.equal(bed.ranCount('say flood-me'), 1, 'the command ran once and was never resent');
      assertBounded(memory);

      const nextId = bed.api.enqueue(SIM_SERVER_ID, { command: 'say after-the-flood' });
      const next = await settled(bed, porter, nextId, 'the next command after the flood');
      assert.equal(next.status, 'EXECUTED', porter.tail());
      assert.equal(bed.ranCount('say after-the-flood'), 1);
      assert.ok(bed.rcon.totalConnections >= 2, 'the flooded connection was reset and a new one opened');
      assert.equal(porter.exit, undefined, porter.tail());
      t.diagnostic(
        `RCON flood: idle RSS ${idle.rssMb.toFixed(0)} MB, peak ${memory.peakMb.toFixed(0)} MB; ` +
          `the fake wrote ${(bed.rcon.floodedBytes / 2 ** 20).toFixed(1)} MiB before porter dropped it`,
      );
    } finally {
      await bed.close();
    }
  });

  test('WebRCON: memory stays bounded, the command fails as too large, the next command is delivered', async (t) => {
    const bed = await startBed();
    const rust = await FakeWebRconServer.start({ password: RCON_PASSWORD, noise: false });
    try {
      bed.writeConfig((config) => {
        config.servers[0]!.executor = {
          type: 'webrcon',
          host: '127.0.0.1',
          port: rust.port,
          password: RCON_PASSWORD,
          timeoutMs: 30_000,
          connectTimeoutMs: 15_000,
        };
        config.servers[0]!.players = { preset: 'rust', refreshMs: 200 };
      });
      const porter = bed.spawnPorter();
      await porter.waitForEvent('connection.up');
      const idle = memoryOf(porter.pid)!;

      const { command, memory } = await deliverUnderFlood(bed, porter, 'flood');

      assert.equal(command.status, 'FAILED', porter.tail());
      assert.match(String(command.error), /answer .*over porter's cap of 4 MiB/);
      assert.equal(rust.received.filter((r) => r.Message === 'flood').length, 1, 'never resent');
      assertBounded(memory);

      const nextId = bed.api.enqueue(SIM_SERVER_ID, { command: 'echo after-the-flood' });
      const next = await settled(bed, porter, nextId, 'the next command after the flood');
      assert.equal(next.status, 'EXECUTED', porter.tail());
      assert.ok(rust.acceptedConnections >= 2, 'the flooded connection was reset and a new one opened');
      t.diagnostic(
        `WebRCON flood: idle RSS ${idle.rssMb.toFixed(0)} MB, peak ${memory.peakMb.toFixed(0)} MB; ` +
          `the fake wrote ${(rust.floodedBytes / 2 ** 20).toFixed(1)} MiB before porter dropped it`,
      );
    } finally {
      await rust.close();
      await bed.close();
    }
  });
});

/** Queues `text`, whose answer the game server floods, and samples porter's memory until it settles. */
async function deliverUnderFlood(bed: TestBed, porter: PorterProcess, text: string) {
  const id = bed.api.enqueue(SIM_SERVER_ID, { command: text });
  const flooded = settled(bed, porter, id, 'the flooded command to settle');
  const memory = await peakWhile(porter, flooded);
  return { command: await flooded, memory };
}

function assertBounded(memory: Memory): void {
  assert.ok(
    memory.peakMb < RSS_BOUND_MB,
    `porter's peak RSS was ${memory.peakMb.toFixed(0)} MB under the flood (bound ${RSS_BOUND_MB} MB)`,
  );
}
