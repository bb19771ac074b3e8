import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { shardOfServer } from '../../src/config/shard.js';
import { SIM_SERVER_ID, startBed, WAIT, isSettled, type PorterProcess } from './harness.js';
import { waitFor } from '../helpers/wait-for.js';

/**
 * Two porters with one configuration, `--shard 0/2` and `PORTER_SHARD=1/2`, each with its own state
 * directory (as two pods of a StatefulSet): every server's purchase is delivered once, by the
 * porter whose shard holds that server, and each says which servers it runs.
 */
describe('porter run --shard through the real CLI', () => {
  test('two shards split the servers: every purchase delivered exactly once, by its own shard', async () => {
    const ids = Array.from({ length: 8 }, () => randomUUID());
    // Both shards get at least one server (ids are random: draw again in the rare case they do not).
    while (new Set(ids.map((id) => shardOfServer(id, 2))).size < 2) ids.push(randomUUID());
    const bed = await startBed({ api: { servers: ids } });
    try {
      const configFor = (stateDir: string) => {
        const config = bed.baseConfig();
        const template = config.servers[0]!;
        config.servers = ids.map((id, n) => ({ ...template, id, name: `srv-${n}` }));
        config.stateDir = stateDir;
        return config;
      };
      const paths = ['a', 'b'].map((pod) => {
        const path = join(bed.dir, `config-${pod}.json`);
        writeFileSync(path, JSON.stringify(configFor(`./state-${pod}`)), { mode: 0o600 });
        return path;
      });
      const commands = ids.map((id, n) => ({ id, command: `give Steve diamond ${n + 1}` }));
      for (const { id, command } of commands) bed.api.enqueue(id, { command });

      const porters: PorterProcess[] = [
        bed.spawnPorter({ args: ['run', '-c', paths[0]!, '--shard', '0/2'] }),
        bed.spawnPorter({ args: ['run', '-c', paths[1]!], env: { PORTER_SHARD: '1/2' } }),
      ];
      await waitFor(() => bed.api.commands().every((c) => isSettled(c.status)) || porters.some((p) => p.exit), {
        ...WAIT,
        what: 'every server’s purchase settled',
      });
      for (const porter of porters) assert.equal(porter.exit, undefined, porter.tail());
      for (const { command } of commands) assert.equal(bed.ranCount(command), 1, `${command} ran once`);
      assert.ok(bed.api.commands().every((c) => c.status === 'EXECUTED'));

      for (const [index, porter] of porters.entries()) {
        const mine = ids.flatMap((id, n) => (shardOfServer(id, 2) === index ? [`srv-${n}`] : []));
        const line = await porter.waitForEvent('shard.summary');
        // Which servers this porter runs is told in the message: an operator reads it there.
        assert.equal(line.msg, `shard ${index}/2: running ${mine.length} of ${ids.length} configured servers: ${mine.join(', ')}`);
        // Only its own servers were pulled for by this porter: its pulls name only them.
        porter.kill('SIGTERM');
        assert.deepEqual(await porter.waitExit(), { code: 0, signal: null }, porter.tail());
      }
      const pulledFor = new Set(bed.api.requests.filter((r) => r.route === 'pull').map((r) => r.serverId));
      assert.deepEqual([...pulledFor].sort(), [...ids].sort(), 'every server was pulled for by one of the two');

      const check = bed.spawnPorter({ args: ['check', '-c', paths[0]!, '--shard', '1/2'] });
      const checked = await check.waitExit();
      assert.equal(checked.code, 0, check.tail());
      const mine = ids.flatMap((id, n) => (shardOfServer(id, 2) === 1 ? [`srv-${n}`] : []));
      assert.match(check.stdout, new RegExp(`✔ shard 1/2: running ${mine.length} of ${ids.length} configured servers: ${mine.join(', ')}`));
      const others = ids.flatMap((id, n) => (shardOfServer(id, 2) === 0 ? [`srv-${n}`] : []));
      for (const name of others) assert.doesNotMatch(check.stdout, new RegExp(`\\b${name}\\b[^,]`), `${name} is not checked by shard 1`);
    } finally {
      await bed.close();
    }
  });

  test('a shard porter cannot use is exit 64 before anything starts, naming the flag', async () => {
    const bed = await startBed();
    try {
      const path = bed.writeConfig();
      const porter = bed.spawnPorter({ args: ['run', '-c', path, '--shard', '2/2'] });
      assert.deepEqual(await porter.waitExit(), { code: 64, signal: null }, porter.tail());
      assert.match(porter.stderr, /--shard "2\/2": shard 2 does not exist among 2 \(they are 0 to 1\)/);
      assert.equal(bed.api.requests.length, 0);
    } finally {
      await bed.close();
    }
  });

  test('a shard that holds no server runs idle until stopped, and says why', async () => {
    const bed = await startBed();
    try {
      const path = bed.writeConfig();
      const empty = shardOfServer(SIM_SERVER_ID, 2) === 0 ? '1/2' : '0/2';
      const porter = bed.spawnPorter({ args: ['run', '-c', path, '--shard', empty] });
      await porter.waitForEvent('porter.started');
      const line = await porter.waitForEvent('shard.summary');
      assert.match(line.msg!, /^shard \d\/2: running 0 of 1 configured server/);
      assert.match(line.msg!, /the others belong to other shards; this porter waits for a reload/);
      assert.equal(porter.exit, undefined, 'it keeps running with nothing to run');
      porter.kill('SIGTERM');
      assert.deepEqual(await porter.waitExit(), { code: 0, signal: null }, porter.tail());
      assert.equal(bed.api.requests.filter((r) => r.route === 'pull').length, 0);
    } finally {
      await bed.close();
    }
  });
});
