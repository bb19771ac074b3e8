import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { waitFor } from '../helpers/wait-for.js';
import { acceptedReports, RCON_PASSWORD, SIM_SERVER_ID, SIM_TOKEN, startBed, WAIT, type PorterProcess } from './harness.js';

/**
 * 401 / 403 / unknown server / wrong RCON password end `porter run` with exit 78
 * and a message that names what is wrong and what to do — and no secret in any output. The secret
 * values are distinctive so a grep over stdout and stderr can prove they never appear.
 */

function assertNoSecret(porter: PorterProcess, secrets: readonly string[]): void {
  for (const secret of secrets) {
    assert.ok(!porter.stdout.includes(secret), `stdout contains the secret ${secret.slice(0, 6)}…`);
    assert.ok(!porter.stderr.includes(secret), `stderr contains the secret ${secret.slice(0, 6)}…`);
  }
}

async function exitsWith78(porter: PorterProcess): Promise<void> {
  const exit = await porter.waitExit();
  assert.deepEqual(exit, { code: 78, signal: null }, porter.tail());
}

/**
 * What the line of this event tells the operator (its message and its error, whose wording is the
 * point of these tests): found by the event, so a reworded message cannot hide the line.
 */
function toldBy(porter: PorterProcess, event: string): string {
  const line = porter.events(event)[0];
  assert.ok(line, `no ${event} line\n${porter.tail()}`);
  return JSON.stringify(line);
}

describe('credentials and configuration rejected at start: exit 78, clear message, no secret printed', () => {
  test('a wrong API token: INVALID_INTEGRATION_TOKEN and how to get a new one', async () => {
    const wrongToken = 'gci_WRONG_9f8e7d6c5b4a3928';
    const bed = await startBed();
    try {
      bed.writeConfig((config) => {
        config.api.token = wrongToken;
      });
      bed.api.enqueue(SIM_SERVER_ID, { command: 'say never' });
      const porter = bed.spawnPorter();
      await exitsWith78(porter);
      const told = toldBy(porter, 'store.refused');
      assert.match(told, /INVALID_INTEGRATION_TOKEN/);
      assert.match(told, /rejected the token/);
      assert.match(told, /create a token with scope commands:execute/);
      assert.equal(porter.events('store.fatal').length, 1, porter.tail());
      assertNoSecret(porter, [wrongToken, RCON_PASSWORD, SIM_TOKEN]);
      assert.equal(bed.api.claimedCount, 0);
      assert.deepEqual(bed.ran(), []);
    } finally {
      await bed.close();
    }
  });

  test('a token without commands:execute (given in PORTER_API_TOKEN): INTEGRATION_SCOPE_MISSING naming the scope', async () => {
    const readOnly = 'gci_READONLY_1a2b3c4d5e6f7a8b';
    const bed = await startBed({ api: { tokens: { [readOnly]: ['servers:read'] } } });
    try {
      bed.writeConfig((config) => {
        delete config.api.token;
      });
      const porter = bed.spawnPorter({ env: { PORTER_API_TOKEN: readOnly } });
      await exitsWith78(porter);
      const told = toldBy(porter, 'store.refused');
      assert.match(told, /INTEGRATION_SCOPE_MISSING/);
      assert.match(told, /requiredScope: commands:execute/);
      assert.match(told, /store dashboard/);
      assertNoSecret(porter, [readOnly, RCON_PASSWORD]);
    } finally {
      await bed.close();
    }
  });

  test('a server id the store does not know: exit 78 naming the id', async () => {
    const unknown = randomUUID();
    const bed = await startBed();
    try {
      bed.writeConfig((config) => {
        config.servers[0]!.id = unknown;
      });
      const porter = bed.spawnPorter();
      await exitsWith78(porter);
      const told = toldBy(porter, 'server.fatal');
      assert.match(told, new RegExp(`does not know server ${unknown}`));
      assert.match(told, /SERVER_NOT_FOUND/);
      assert.match(told, /check servers\[\]\.id/);
      assertNoSecret(porter, [SIM_TOKEN, RCON_PASSWORD]);
    } finally {
      await bed.close();
    }
  });

  test('a wrong RCON password: exit 78, "the RCON password was rejected", nothing pulled', async () => {
    const wrongPassword = 'rcon-WRONG-5c4b3a2918';
    const bed = await startBed();
    try {
      bed.writeConfig((config) => {
        config.servers[0]!.executor.password = wrongPassword;
      });
      bed.api.enqueue(SIM_SERVER_ID, { command: 'say never' });
      const porter = bed.spawnPorter();
      await exitsWith78(porter);
      assert.equal(porter.events('connection.refused').length, 1, porter.tail());
      const told = toldBy(porter, 'porter.fatal');
      assert.match(told, /the RCON password was rejected/);
      assert.match(told, /passwordFile/);
      assertNoSecret(porter, [wrongPassword, RCON_PASSWORD, SIM_TOKEN]);
      assert.ok(bed.rcon.authFailures >= 1);
      assert.equal(bed.api.requests.filter((r) => r.route === 'pull').length, 0, 'porter pulled with a game server it cannot log in to');
    } finally {
      await bed.close();
    }
  });

  test('PORTER_RCON_PASSWORD with a trailing CR (an env file saved on Windows): exit 78 naming the variable and the CR, never "password rejected"', async () => {
    const bed = await startBed();
    try {
      bed.writeConfig((config) => {
        delete config.servers[0]!.executor.password;
      });
      bed.api.enqueue(SIM_SERVER_ID, { command: 'say never' });
      const porter = bed.spawnPorter({ env: { PORTER_RCON_PASSWORD: `${RCON_PASSWORD}\r` } });
      await exitsWith78(porter);
      assert.match(porter.output, /PORTER_RCON_PASSWORD ends with a carriage return \(CR/);
      assert.match(porter.output, /Windows line endings/);
      assert.doesNotMatch(porter.output, /password was rejected/);
      assertNoSecret(porter, [RCON_PASSWORD, SIM_TOKEN]);
      assert.equal(bed.rcon.authFailures, 0, 'porter tried the password with its CR on the game server');
      assert.equal(bed.api.claimedCount, 0);
    } finally {
      await bed.close();
    }
  });
});

describe('secrets too long to be plausible', () => {
  /** Text no test writes by chance: hex, so that any 32 characters of it found in the output are a leak. */
  const noise = (length: number) =>
    randomBytes(Math.ceil(length / 2))
      .toString('hex')
      .slice(0, length);

  /** Whether any 32-character window of `secret` is in `text` (the old failure printed the whole pattern; a part is a leak too). */
  function holdsPartOf(text: string, secret: string): boolean {
    for (let at = 0; at + 32 <= secret.length; at += 16) if (text.includes(secret.slice(at, at + 32))) return true;
    return false;
  }

  test('a 60 KB passwordFile and a 40,000-character PORTER_API_TOKEN: run and check exit 78 naming both, no part of either printed', async () => {
    const token = `gci_${noise(40_000 - 4)}`;
    const password = noise(60_000);
    const bed = await startBed();
    try {
      writeFileSync(join(bed.dir, 'rcon-password'), `${password}\n`, { mode: 0o600 });
      bed.writeConfig((config) => {
        delete config.api.token;
        delete config.servers[0]!.executor.password;
        config.servers[0]!.executor.passwordFile = 'rcon-password';
      });
      for (const command of ['run', 'check']) {
        const porter = bed.spawnPorter({ env: { PORTER_API_TOKEN: token }, args: [command, '-c', bed.configPath] });
        await exitsWith78(porter);
        assert.match(porter.output, /PORTER_API_TOKEN holds 40000 characters, more than the 8192 porter accepts for a secret/, command);
        assert.match(porter.output, /servers\[0\]\.executor\.passwordFile: \S*rcon-password holds 60000 characters/, command);
        assert.match(porter.output, /put only the secret there/, command);
        assert.ok(!holdsPartOf(porter.output, token), `${command} printed part of the token`);
        assert.ok(!holdsPartOf(porter.output, password), `${command} printed part of the password`);
        assert.doesNotMatch(porter.output, /Regular expression too large/, command);
      }
      assert.equal(bed.api.requests.length, 0, 'porter called the Seller API with a token it refused');
    } finally {
      await bed.close();
    }
  });

  test('read while porter runs: a reload refuses a huge passwordFile and keeps delivering; a huge rotated token file is not used', async () => {
    const password = noise(60_000);
    const token = `gci_${noise(40_000 - 4)}`;
    const bed = await startBed();
    try {
      const passwordFile = join(bed.dir, 'rcon-password');
      const tokenFile = join(bed.dir, 'api-token');
      writeFileSync(passwordFile, `${RCON_PASSWORD}\n`, { mode: 0o600 });
      writeFileSync(tokenFile, `${SIM_TOKEN}\n`, { mode: 0o600 });
      bed.writeConfig((config) => {
        delete config.api.token;
        config.api.tokenFile = './api-token';
        delete config.servers[0]!.executor.password;
        config.servers[0]!.executor.passwordFile = './rcon-password';
      });
      const porter = bed.spawnPorter();
      await porter.waitForEvent('porter.started');

      writeFileSync(passwordFile, `${password}\n`, { mode: 0o600 });
      porter.kill('SIGHUP');
      const refused = JSON.stringify(await porter.waitForEvent('reload.invalid'));
      assert.match(refused, /passwordFile: \S*rcon-password holds 60000 characters, more than the 8192/);
      const id = bed.api.enqueue(SIM_SERVER_ID, { command: 'say still here', offlineExecute: true });
      await waitFor(() => bed.api.commands().find((c) => c.id === id)?.status === 'EXECUTED' || porter.exit, {
        ...WAIT,
        what: 'a delivery with the running configuration',
      });
      assert.equal(porter.exit, undefined, porter.tail());

      // The store owner "rotates" the token into a file that holds far more than a token.
      writeFileSync(tokenFile, `${token}\n`, { mode: 0o600 });
      bed.api.setToken(SIM_TOKEN, null);
      bed.api.enqueue(SIM_SERVER_ID, { command: 'say after', offlineExecute: true });
      await exitsWith78(porter);
      assert.match(toldBy(porter, 'api.token.unusable'), /api-token holds 40000 characters/);
      assert.ok(!holdsPartOf(porter.output, password), 'part of the password was printed');
      assert.ok(!holdsPartOf(porter.output, token), 'part of the token was printed');
    } finally {
      await bed.close();
    }
  });
});

describe("commander's own output", () => {
  test('a usage error that quotes a secret given by mistake as an argument prints it scrubbed, exit 64', async () => {
    const bed = await startBed();
    try {
      // A token pasted where the command goes: commander answers "unknown command '<it>'".
      const porter = bed.spawnPorter({ env: { PORTER_API_TOKEN: SIM_TOKEN }, args: [SIM_TOKEN] });
      assert.deepEqual(await porter.waitExit(), { code: 64, signal: null }, porter.tail());
      assert.match(porter.stderr, /unknown command '\[Redacted\]'/);
      assertNoSecret(porter, [SIM_TOKEN]);
    } finally {
      await bed.close();
    }
  });
});

describe('credentials rejected at run time', () => {
  test('the token is revoked while porter runs: exit 78 naming INVALID_INTEGRATION_TOKEN, what was delivered stays delivered', async () => {
    const bed = await startBed();
    try {
      bed.writeConfig();
      bed.api.enqueue(SIM_SERVER_ID, { command: 'say before-revoke' });
      const porter = bed.spawnPorter();
      await waitFor(() => bed.api.commands()[0]!.status === 'EXECUTED', { ...WAIT, what: 'the first delivery' });
      bed.api.setToken(SIM_TOKEN, null);
      await exitsWith78(porter);
      assert.match(toldBy(porter, 'store.refused'), /INVALID_INTEGRATION_TOKEN/);
      assertNoSecret(porter, [SIM_TOKEN, RCON_PASSWORD]);
      assert.equal(acceptedReports(bed.api.commands()[0]!), 1);
    } finally {
      await bed.close();
    }
  });

  test('the RCON password changes under porter and the game server restarts: exit 78, the new password never printed', async () => {
    const newPassword = 'rcon-NEW-0d1e2f3a4b5c';
    const bed = await startBed();
    try {
      bed.writeConfig();
      bed.api.enqueue(SIM_SERVER_ID, { command: 'say before-change' });
      const porter = bed.spawnPorter();
      await waitFor(() => bed.api.commands()[0]!.status === 'EXECUTED', { ...WAIT, what: 'the first delivery' });
      bed.rcon.setPassword(newPassword);
      await bed.rcon.restart();
      await exitsWith78(porter);
      assert.equal(porter.events('connection.refused').length, 1, porter.tail());
      assert.match(toldBy(porter, 'server.fatal'), /the RCON password was rejected/);
      assertNoSecret(porter, [newPassword, RCON_PASSWORD, SIM_TOKEN]);
    } finally {
      await bed.close();
    }
  });
});

describe('402 PLAN_FEATURE_REQUIRED is not a credentials error', () => {
  test('porter keeps running, says so clearly, and still stops cleanly on SIGTERM', async () => {
    const bed = await startBed({ api: { plan: false } });
    try {
      // A drain far longer than the exit bound below: a stop that waited it out cannot pass, and a
      // loaded machine has seconds of slack to exit.
      bed.writeConfig((config) => {
        config.shutdown.drainMs = 120_000;
      });
      bed.api.enqueue(SIM_SERVER_ID, { command: 'say not-yet' });
      const porter = bed.spawnPorter();
      await waitFor(() => bed.api.requests.some((r) => r.route === 'pull' && r.status === 402) || porter.exit, {
        ...WAIT,
        what: 'a 402 answer',
      });
      const line = await porter.waitForEvent('api.plan.missing');
      assert.equal(line.level, 'error');
      assert.match(line.msg ?? '', /plan does not include API access/, 'the line says what is wrong');
      assert.equal(porter.exit, undefined, porter.tail());
      assert.equal(bed.api.claimedCount, 0);
      // Slow retries: one pull, not a storm, in the time porter took to log it.
      assert.equal(bed.api.requests.filter((r) => r.route === 'pull').length, 1);
      porter.kill('SIGTERM');
      assert.deepEqual(await porter.waitExit(30_000), { code: 0, signal: null }, porter.tail());
      assertNoSecret(porter, [SIM_TOKEN, RCON_PASSWORD]);
    } finally {
      await bed.close();
    }
  });
});
