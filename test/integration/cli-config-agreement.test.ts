import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync } from 'node:fs';
import { connect } from 'node:net';
import { startBed, type ConfigEdit, type TestBed } from './harness.js';

/**
 * Over the real CLI: `porter check` and `porter run` refuse the same
 * configs (exit 78, naming the key) and accept the same ones; the start-up warnings about exposed
 * secrets and a health endpoint off loopback reach both outputs.
 */

async function withBed(edit: ConfigEdit, body: (bed: TestBed) => Promise<void>): Promise<void> {
  const bed = await startBed({ rcon: { players: ['Steve'] } });
  try {
    bed.writeConfig(edit);
    await body(bed);
  } finally {
    await bed.close();
  }
}

async function check(bed: TestBed) {
  const porter = bed.spawnPorter({ args: ['check', '-c', bed.configPath] });
  const exit = await porter.waitExit();
  return { code: exit.code, stdout: porter.stdout, tail: porter.tail() };
}

async function run(bed: TestBed) {
  const porter = bed.spawnPorter();
  const exit = await porter.waitExit();
  return { code: exit.code, stderr: porter.stderr, tail: porter.tail() };
}

const refused: Array<[string, ConfigEdit, RegExp]> = [
  [
    'a deny regex that does not compile',
    (config) => Object.assign(config.servers[0]!, { commandPolicy: { deny: ['/[unclosed/'] } }),
    /servers\[0\]\.commandPolicy\.deny\[0\]: not a valid regular expression/,
  ],
  [
    'health.listen on port 99999',
    (config) => Object.assign(config, { health: { listen: '127.0.0.1:99999' } }),
    /health\.listen: expected host:port/,
  ],
  [
    'a budget share of 0',
    (config) => (config.api.budget = { share: 0 }),
    /api\.budget: perWindow \(120\) × share \(0\) allows no call at all/,
  ],
];

describe('porter check and porter run agree (real CLI)', () => {
  for (const [name, edit, key] of refused) {
    test(`both exit 78 naming the key: ${name}`, async () => {
      await withBed(edit, async (bed) => {
        const [checked, ran] = await Promise.all([check(bed), run(bed)]);
        assert.equal(checked.code, 78, checked.tail);
        assert.match(checked.stdout, new RegExp(`✖ config: .*[\\s\\S]*${key.source}`), checked.tail);
        assert.equal(ran.code, 78, ran.tail);
        assert.match(ran.stderr, key, ran.tail);
        assert.equal(bed.api.claimedCount, 0);
      });
    });
  }

  test('both accept plain http to the IPv4-mapped loopback address [::ffff:127.0.0.1]', async (t) => {
    if (!(await reachable('::ffff:127.0.0.1'))) {
      t.skip('this host cannot open an IPv6 socket to ::ffff:127.0.0.1');
      return;
    }
    await withBed(
      (config) => (config.api.baseUrl = (config.api.baseUrl as string).replace('127.0.0.1', '[::ffff:127.0.0.1]')),
      async (bed) => {
        const checked = await check(bed);
        assert.equal(checked.code, 0, checked.tail);
        const porter = bed.spawnPorter();
        await porter.waitForEvent('porter.started');
        porter.kill('SIGTERM');
        assert.deepEqual(await porter.waitExit(), { code: 0, signal: null }, porter.tail());
      },
    );
  });
});

describe('start-up warnings (real CLI)', () => {
  test('a readable config with the token inline and health.listen on every interface: one warning each, in check and in run', async () => {
    await withBed(
      (config) => Object.assign(config, { health: { listen: '0.0.0.0:0' } }),
      async (bed) => {
        chmodSync(bed.configPath, 0o644);
        const checked = await check(bed);
        assert.equal(checked.code, 0, checked.tail);
        const warnings = checked.stdout.split('\n').filter((line) => line.startsWith('! '));
        assert.equal(warnings.length, 2, checked.stdout);
        assert.match(
          warnings[0]!,
          new RegExp(
            `^! ${bed.configPath} holds api\\.token and servers\\[0\\]\\.executor\\.password and other users can read it \\(mode 0644\\): chmod 600`,
          ),
        );
        assert.match(warnings[1]!, new RegExp(`^! health\\.listen 0\\.0\\.0\\.0:0 in ${bed.configPath} is not a loopback address`));

        const porter = bed.spawnPorter();
        await porter.waitForEvent('porter.started');
        // The same two warnings, in the words check used: what they tell the operator is the point.
        const logged = porter.events('config.warning').map((line) => String(line.msg));
        assert.equal(logged.length, 2, porter.tail());
        assert.match(logged[0]!, /other users can read it/);
        assert.match(logged[1]!, /is not a loopback address/);
        porter.kill('SIGTERM');
        assert.equal((await porter.waitExit()).code, 0, porter.tail());
      },
    );
  });

  test('mode 0600 and a loopback listen address: no warning', async () => {
    await withBed(
      (config) => Object.assign(config, { health: { listen: '127.0.0.1:0' } }),
      async (bed) => {
        const checked = await check(bed);
        assert.equal(checked.code, 0, checked.tail);
        assert.deepEqual(
          checked.stdout.split('\n').filter((line) => line.startsWith('! ')),
          [],
        );
      },
    );
  });
});

/** Whether this host can open a TCP connection to `host` at all (a refused connection counts: the route exists). */
function reachable(host: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port: 1 });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'ECONNREFUSED'));
  });
}
