import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { missingTool } from '../ship/run.js';
import { waitFor } from '../helpers/wait-for.js';
import { RCON_PASSWORD, startBed, WAIT, type TestBed } from './harness.js';

/**
 * The open-file limit through the real CLI, spawned under prlimit: 60 servers on one game
 * server cannot all have a connection under a limit of 64 descriptors. The ones that fit must
 * deliver, the log must say what is wrong (EMFILE, the open-file limit, how to raise it) and never
 * send the owner looking at the network.
 */

const SERVERS = 60;
const ids = Array.from({ length: SERVERS }, (_, i) => `00000000-0000-4000-8000-${(i + 1).toString(16).padStart(12, '0')}`);
const skip = missingTool('prlimit', 'apt-get install util-linux');

function fleetConfig(bed: TestBed): void {
  bed.writeConfig((config) => {
    const template = config.servers[0]!;
    config.servers = ids.map((id, i) => ({
      ...template,
      id,
      name: `s${i + 1}`,
      executor: { ...template.executor, password: RCON_PASSWORD },
      players: { preset: 'minecraft', refreshMs: 2000 },
    }));
    config.poll.idleMs = 1000;
  });
}

const NETWORK_HINT = /firewall|check api\.baseUrl and the network|check host and port|not reachable/i;

describe('the open-file limit', { skip }, () => {
  test(`${SERVERS} servers under a limit of 64 open files: the servers that fit deliver, the log names EMFILE and how to raise the limit`, async (t) => {
    const bed = await startBed({ api: { servers: ids } });
    try {
      fleetConfig(bed);
      for (const id of ids) bed.api.enqueue(id, { command: `say for ${id}` });
      const porter = bed.spawnPorter({ prlimit: '64:64' });
      const enough = 10;
      await waitFor(() => bed.api.commands().filter((c) => c.status === 'EXECUTED').length >= enough || porter.exit, {
        ...WAIT,
        timeoutMs: 60_000,
        what: `${enough} servers delivering`,
      });
      assert.equal(porter.exit, undefined, porter.tail());
      await porter.waitForEvent('game.openfiles', undefined, 'a server out of open files');
      porter.kill('SIGTERM');
      await porter.waitExit();

      const executed = bed.api.commands().filter((c) => c.status === 'EXECUTED');
      t.diagnostic(`${executed.length} of ${SERVERS} servers delivered; ${bed.rcon.totalConnections} RCON connections accepted`);
      assert.ok(executed.length >= enough);
      for (const command of bed.api.commands()) assert.ok(command.claims <= 1, `claimed twice: ${command.id}`);
      for (const command of executed) assert.equal(bed.ranCount(command.command as string), 1);
      // Every line about the missing descriptors names the cause and the fix, never the network:
      // the wording is the point here, so every line that mentions them is read, whatever its event.
      const about = porter.lines.filter((line) => /EMFILE|open files/.test(JSON.stringify(line)));
      assert.ok(about.length > 0);
      for (const line of about) {
        const text = JSON.stringify(line);
        assert.match(text, /open-file limit/, text);
        assert.match(text, /LimitNOFILE=/, text);
        assert.match(text, /ulimit -n/, text);
        assert.doesNotMatch(text, NETWORK_HINT, text);
      }
      assert.ok(
        porter.events('game.openfiles').some((line) => /EMFILE/.test(JSON.stringify(line)) && line.server !== undefined),
        'a server that got no connection says so',
      );
    } finally {
      await bed.close();
    }
  });

  test('porter check under a limit of 64 warns that 60 servers need more open files', async () => {
    const bed = await startBed({ api: { servers: ids } });
    try {
      fleetConfig(bed);
      const check = bed.spawnPorter({ args: ['check', '-c', bed.configPath], prlimit: '64:64' });
      await check.waitExit(120_000);
      assert.match(check.stdout, /^! open files: 60 servers need about \d+ open files .* but the open-file limit is 64:/m, check.tail());
      assert.match(check.stdout, /LimitNOFILE=.*ulimit -n/);
    } finally {
      await bed.close();
    }
  });

  test("node raises the soft limit to the hard one: under prlimit 64:4096 porter's soft limit is 4096", async () => {
    const bed = await startBed();
    try {
      bed.writeConfig();
      const porter = bed.spawnPorter({ prlimit: '64:4096' });
      await porter.waitForEvent('porter.started');
      const limits = readFileSync(`/proc/${porter.pid}/limits`, 'utf8');
      porter.kill('SIGTERM');
      await porter.waitExit();
      assert.match(limits, /^Max open files\s+4096\s+4096\s/m, limits);
    } finally {
      await bed.close();
    }
  });
});
