import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { waitFor } from '../helpers/wait-for.js';
import { isSettled, SIM_SERVER_ID, startBed, WAIT, type PorterProcess, type TestBed } from './harness.js';

/**
 * A delivery script that cannot be started used to be "not sent, retry": 3,423
 * spawns and as many warnings in 20 s, with a reason blaming the game server. Through the real
 * CLI: such a command fails at once, with the real reason, in one log line.
 */

const fixture = (name: string) => fileURLToPath(new URL(`../../../test/fixtures/scripts/${name}`, import.meta.url));

async function settled(bed: TestBed, porter: PorterProcess, id: string) {
  return waitFor(
    () => {
      const command = bed.api.commands().find((c) => c.id === id);
      if (command && isSettled(command.status)) return command;
      if (porter.exit) throw new Error(`porter exited (${JSON.stringify(porter.exit)})\n${porter.tail()}`);
      return undefined;
    },
    { ...WAIT, what: `command ${id} to settle` },
  );
}

describe('a delivery script that cannot be started, through the real CLI', () => {
  test('a script gone missing and a command too long for an argument fail at once, one log line each; the next command runs', async () => {
    const bed = await startBed();
    try {
      const script = join(bed.dir, 'deliver.sh');
      copyFileSync(fixture('args.sh'), script);
      bed.writeConfig((config) => {
        config.servers[0]!.executor = { type: 'script', exec: [script], timeoutMs: 10_000 };
        delete config.servers[0]!.players;
      });
      const porter = bed.spawnPorter();
      const firstId = bed.api.enqueue(SIM_SERVER_ID, { command: 'say first' });
      assert.equal((await settled(bed, porter, firstId)).status, 'EXECUTED', porter.tail());

      // E2BIG: one argument over Linux's 128 KiB.
      const longId = bed.api.enqueue(SIM_SERVER_ID, { command: `say ${'x'.repeat(200 * 1024)}` });
      const long = await settled(bed, porter, longId);
      assert.equal(long.status, 'FAILED');
      assert.match(String(long.error), /E2BIG/);
      assert.match(String(long.error), /shorten it in the store/);

      rmSync(script);
      const goneId = bed.api.enqueue(SIM_SERVER_ID, { command: 'say gone' });
      const gone = await settled(bed, porter, goneId);
      assert.equal(gone.status, 'FAILED');
      assert.match(String(gone.error), /deliver\.sh/);
      assert.match(String(gone.error), /ENOENT/);
      assert.doesNotMatch(String(gone.error), /unreachable|game server/);

      copyFileSync(fixture('args.sh'), script);
      const backId = bed.api.enqueue(SIM_SERVER_ID, { command: 'say back' });
      assert.equal((await settled(bed, porter, backId)).status, 'EXECUTED', porter.tail());

      assert.deepEqual(porter.events('delivery.waiting'), [], 'never retried as "not sent"');
      const failures = porter.events('delivery.failed');
      assert.deepEqual(
        failures.map((line) => line.id),
        [longId, goneId],
        'one line per command',
      );
      assert.equal(porter.exit, undefined, porter.tail());
    } finally {
      await bed.close();
    }
  });
});
