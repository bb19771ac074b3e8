import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { waitFor } from '../helpers/wait-for.js';
import { RCON_PASSWORD, SIM_SERVER_ID, SIM_TOKEN, startBed, WAIT } from './harness.js';

/**
 * "No secret leaves", through the real CLI: a game server whose failure answer echoes the RCON
 * password and the API token. The reason porter sends to the store, what it journals and what it
 * logs must hold neither.
 */

describe('secrets echoed by the game server, through the real CLI', () => {
  test('are scrubbed from the fail reason sent to the store, from the journal and from the logs', async () => {
    const bed = await startBed();
    try {
      bed.writeConfig();
      bed.rcon.setHandler((command) =>
        command.startsWith('give ') ? `Unknown or incomplete command: auth ${RCON_PASSWORD} token ${SIM_TOKEN} rejected` : undefined,
      );
      const id = bed.api.enqueue(SIM_SERVER_ID, { command: 'give Steve diamond 1' });
      const porter = bed.spawnPorter();
      await waitFor(() => bed.api.commands().find((c) => c.id === id)?.status === 'FAILED' || porter.exit, {
        ...WAIT,
        what: 'the failed delivery',
      });
      porter.kill('SIGTERM');
      assert.deepEqual(await porter.waitExit(), { code: 0, signal: null }, porter.tail());

      const reason = bed.api.commands().find((c) => c.id === id)?.error ?? '';
      assert.match(reason, /^the game answered: Unknown or incomplete command: auth \[Redacted\] token \[Redacted\] rejected/);
      const stateDir = join(bed.dir, 'state');
      const stored = readdirSync(stateDir)
        .map((name) => readFileSync(join(stateDir, name), 'utf8'))
        .join('\n');
      for (const secret of [RCON_PASSWORD, SIM_TOKEN]) {
        assert.ok(!reason.includes(secret), 'a secret reached the store');
        assert.ok(!stored.includes(secret), 'a secret reached the journal');
        assert.ok(!porter.output.includes(secret), 'a secret reached the logs');
      }
    } finally {
      await bed.close();
    }
  });
});
