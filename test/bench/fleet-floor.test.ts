import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { startRconServer, type FakeRconServer } from '../../src/sim/rcon-server.js';
import { SIM_TOKEN, startSellerApi, type FakeSellerApi } from '../../src/sim/faults/seller-api.js';
import { waitFor } from '../helpers/wait-for.js';

const FLOOR = fileURLToPath(new URL('../../bench/fleet-floor.js', import.meta.url));
const PREFIX = '00000000-0000-4000-8000-';
const SERVERS = 12;
const PASSWORD = 'floor-test';

const ids = Array.from({ length: SERVERS }, (_, i) => `${PREFIX}${(i + 1).toString(16).padStart(12, '0')}`);

function startFloor(api: FakeSellerApi, games: readonly FakeRconServer[], schedule: string) {
  const child = spawn(
    process.execPath,
    // 24 pulls/s and 12 reads/s over 12 servers: every server pulled twice and read once a second.
    [FLOOR, api.url, PREFIX, String(SERVERS), '24', '12', '4', games.map((g) => g.port).join(','), schedule],
    { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, BENCH_API_TOKEN: SIM_TOKEN, BENCH_RCON_PASSWORD: PASSWORD } },
  );
  let out = '';
  let err = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
  return { child, out: () => out, err: () => err };
}

describe('the fleet floor (bench/fleet-floor.ts): the calls porter made, with no decisions', () => {
  let api: FakeSellerApi;
  let games: FakeRconServer[];

  before(async () => {
    api = await startSellerApi({ servers: ids });
    games = [await startRconServer({ password: PASSWORD }), await startRconServer({ password: PASSWORD })];
  });

  after(async () => {
    await api.close();
    await Promise.all(games.map((g) => g.close()));
  });

  for (const schedule of ['tick', 'per-server']) {
    test(`on the ${schedule} schedule, every server is pulled and every server's game connection is read, and SIGTERM stops it cleanly`, async () => {
      const floor = startFloor(api, games, schedule);
      try {
        await waitFor(() => floor.out().includes('ready'), { what: 'the floor to log in everywhere', timeoutMs: 30_000 });
        const pullsFrom = api.requests.length;
        const readsFrom = games.map((g) => g.executed.length);
        await waitFor(
          () => {
            const pulled = new Set(api.requests.slice(pullsFrom).flatMap((r) => (r.route === 'pull' ? [r.serverId] : [])));
            const read = new Set(
              games.flatMap((g, i) =>
                g.executed
                  .slice(readsFrom[i])
                  .filter((c) => c.command === 'list')
                  .map((c) => `${i}:${c.connection}`),
              ),
            );
            return ids.every((id) => pulled.has(id)) && read.size === SERVERS;
          },
          { what: `a pull from each of ${SERVERS} servers and a read on each of their game connections`, timeoutMs: 30_000 },
        );
        assert.equal(
          api.requests.slice(pullsFrom).filter((r) => r.route === 'pull' && r.status !== 200 && r.status !== 204).length,
          0,
          'every pull was answered as an empty queue answers',
        );
      } finally {
        floor.child.kill('SIGTERM');
      }
      const [code] = (await once(floor.child, 'exit')) as [number | null];
      assert.equal(code, 0, floor.err());
    });
  }

  test("on porter's schedule, a pull whose connection is reset does not end that server's pulls: its next one follows", async () => {
    const [first] = ids as [string];
    api.inject('pull', 'reset', { serverId: first });
    const pullsFrom = api.requests.length;
    const floor = startFloor(api, games, 'per-server');
    try {
      await waitFor(
        () => {
          const mine = api.requests.slice(pullsFrom).filter((r) => r.route === 'pull' && r.serverId === first);
          const reset = mine.findIndex((r) => r.status === 0);
          return reset >= 0 && mine.slice(reset + 1).some((r) => r.status === 204);
        },
        { what: `a pull of ${first} answered after the reset one`, timeoutMs: 30_000 },
      );
    } finally {
      floor.child.kill('SIGTERM');
      api.clearFaults();
    }
    const [code] = (await once(floor.child, 'exit')) as [number | null];
    assert.equal(code, 0, floor.err());
  });

  test('an unknown schedule is refused with the usage line, before any call', async () => {
    const pullsBefore = api.requests.length;
    const floor = startFloor(api, games, 'sometimes');
    const [code] = (await once(floor.child, 'exit')) as [number | null];
    assert.equal(code, 2);
    assert.match(floor.err(), /usage: .*\[tick\|per-server\]/);
    assert.equal(api.requests.length, pullsBefore);
  });
});
