import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { applyShard, parseShard, shardOfServer, shardSummary } from '../../src/config/shard.js';
import type { Config, ResolvedServer } from '../../src/config/schema.js';
import { fcOptions } from '../helpers/fc-options.js';

describe('--shard I/N and PORTER_SHARD', () => {
  test('I/N and auto/N (the StatefulSet ordinal of the host name) are read', () => {
    assert.deepEqual(parseShard('1/3', '--shard', 'anything'), { index: 1, count: 3 });
    assert.deepEqual(parseShard(' 0 / 1 ', 'PORTER_SHARD', 'anything'), { index: 0, count: 1 });
    assert.deepEqual(parseShard('auto/4', '--shard', 'porter-3'), { index: 3, count: 4 });
    assert.deepEqual(parseShard('auto/12', 'PORTER_SHARD', 'game-node-pool-porter-10'), { index: 10, count: 12 });
  });

  test('a value porter cannot use is a usage error (64) naming where it came from and what it takes', () => {
    const cases: Array<[string, string, RegExp]> = [
      ['3', 'x-0', /--shard "3" is not a shard: --shard takes I\/N/],
      ['1/0', 'x-0', /N must be 1 to 10000/],
      ['3/3', 'x-0', /shard 3 does not exist among 3 \(they are 0 to 2\)/],
      ['-1/3', 'x-0', /is not a shard/],
      ['auto/3', 'porter', /the host name "porter" does not end in -<number>.*--shard 0\/3/],
      ['auto/3', 'porter-5', /shard 5 does not exist among 3.*replicas and N must be the same number/],
    ];
    for (const [text, host, message] of cases) {
      assert.throws(
        () => parseShard(text, '--shard', host),
        (error: Error & { exitCode?: number }) => error.exitCode === 64 && message.test(error.message),
        text,
      );
    }
    assert.throws(() => parseShard('x/2', 'PORTER_SHARD', 'h'), /PORTER_SHARD "x\/2"/);
  });

  test('a server belongs to sha256(id)[0..8] big-endian mod N, as the fleet contract fixes it', () => {
    // Expected values computed independently with Python's hashlib (int.from_bytes(d[:8], "big") % N).
    assert.deepEqual(
      [2, 3, 7, 1000].map((n) => shardOfServer('1b4e28ba-2fa1-11d2-883f-0016d3cca427', n)),
      [0, 2, 0, 320],
    );
    assert.deepEqual(
      [2, 3, 7, 1000].map((n) => shardOfServer('a', n)),
      [0, 1, 4, 250],
    );
    assert.deepEqual(
      [2, 3, 7, 1000].map((n) => shardOfServer('survival', n)),
      [0, 2, 5, 792],
    );
  });

  test('property: the shards of one N split any set of servers so that each runs in exactly one', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.string({ minLength: 1, maxLength: 40 }), { maxLength: 30 }),
        fc.integer({ min: 1, max: 9 }),
        (ids, n) => {
          const config = { servers: ids.map((id) => ({ id }) as ResolvedServer) } as Config;
          const runs = new Map<string, number>();
          for (let index = 0; index < n; index++) {
            const mine = applyShard(config, { index, count: n });
            assert.equal(mine.shard?.serversConfigured, ids.length);
            for (const server of mine.servers) runs.set(server.id, (runs.get(server.id) ?? 0) + 1);
          }
          assert.deepEqual([...runs.keys()].sort(), [...ids].sort());
          assert.ok([...runs.values()].every((count) => count === 1));
        },
      ),
      fcOptions({ numRuns: 200 }),
    );
  });

  test('without a shard the configuration is unchanged; the summary names what the shard runs', () => {
    const servers = ['a', 'b', 'c', 'd'].map((id) => ({ id, name: `srv-${id}` }) as ResolvedServer);
    const config = { servers } as Config;
    assert.equal(applyShard(config, undefined), config);
    assert.equal(shardSummary(config), undefined);
    // sha256 mod 2: a → 0; the others by the same rule.
    const zero = applyShard(config, { index: 0, count: 2 });
    const one = applyShard(config, { index: 1, count: 2 });
    assert.ok(zero.servers.some((s) => s.id === 'a'));
    assert.equal(zero.servers.length + one.servers.length, 4);
    assert.match(shardSummary(zero)!, new RegExp(`^shard 0/2: running ${zero.servers.length} of 4 configured servers: srv-a`));
    const empty = applyShard({ servers: [servers[0]!] } as Config, { index: 1, count: 2 });
    assert.match(
      shardSummary(empty)!,
      /^shard 1\/2: running 0 of 1 configured server \(the others belong to other shards; this porter waits for a reload\)$/,
    );
  });
});
