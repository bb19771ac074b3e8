import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { MAX_SECRET_LENGTH } from '../../src/config/secrets.js';
import { failedWithAnswer, RCON_PASSWORD, SIM_TOKEN, startBed } from './harness.js';

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
      const { reason, porter } = await failedWithAnswer(
        bed,
        `Unknown or incomplete command: auth ${RCON_PASSWORD} token ${SIM_TOKEN} rejected`,
      );
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

  test('a token just under the length limit works, and is scrubbed from what the game echoes', async () => {
    // Random, so that no 32 characters of it turn up in the output by chance.
    const token = `gci_${randomBytes(MAX_SECRET_LENGTH)
      .toString('hex')
      .slice(0, MAX_SECRET_LENGTH - 4)}`;
    const bed = await startBed({ api: { tokens: { [token]: ['commands:execute', 'servers:read'] } } });
    try {
      bed.writeConfig((config) => {
        config.api.token = token;
      });
      const { reason, porter } = await failedWithAnswer(bed, `Unknown or incomplete command: token ${token} rejected`);
      assert.match(reason, /^the game answered: Unknown or incomplete command: token \[Redacted\] rejected/);
      for (let at = 0; at + 32 <= token.length; at += 16) {
        const part = token.slice(at, at + 32);
        assert.ok(!reason.includes(part) && !porter.output.includes(part), `part of the token at ${at} left porter`);
      }
    } finally {
      await bed.close();
    }
  });
});
