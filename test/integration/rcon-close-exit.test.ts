import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { startRconServer, type FakeRconServer } from '../../src/sim/faults/rcon-server.js';
import { PASSWORD } from '../protocols/rcon/helpers/setup.js';

/** RconExecutor's close(), seen from a process of its own: nothing it leaves keeps Node running. */
describe('RconExecutor close()', () => {
  let server: FakeRconServer;
  before(async () => {
    server = await startRconServer({ password: PASSWORD, players: ['Steve'] });
  });
  after(() => server.close());

  test('leaves no handles: a process that used the executor exits by itself', async () => {
    const repo = fileURLToPath(new URL('../../../', import.meta.url));
    const executorModule = new URL('../../src/protocols/rcon/executor.js', import.meta.url).href;
    const down = await startRconServer({ password: PASSWORD });
    await down.down();
    // Two executors: one used and closed, one left reconnecting with backoff when closed. The
    // child never calls process.exit, so any timer or socket left behind keeps it alive.
    const code = `
      import { pino } from 'pino';
      import { RconExecutor } from ${JSON.stringify(executorModule)};
      const [port, downPort, password] = process.argv.slice(1);
      const config = (p) => ({ type: 'rcon', host: '127.0.0.1', port: Number(p), password, flavour: 'minecraft',
        timeoutMs: 2000, connectTimeoutMs: 2000, maxRequestBytes: 1446 });
      const logger = pino({ level: 'silent' });
      const used = new RconExecutor(config(port), { logger });
      await used.connect();
      process.stdout.write(await used.execute('give Steve apple', { id: '1', serverId: 's' }));
      // Closed once its first attempt has failed, so its 60 s backoff timer is what close() must clear.
      let inBackoff;
      const backingOff = new Promise((resolve) => (inBackoff = resolve));
      const watcher = pino({ level: 'warn' }, { write: (line) => /"event":"connection.retrying"/.test(line) && inBackoff() });
      const retrying = new RconExecutor(config(downPort), { logger: watcher, backoff: { initialMs: 60000, maxMs: 60000 } });
      const waiting = retrying.waitReady().catch((e) => e.code);
      await backingOff;
      await Promise.all([used.close(), retrying.close()]);
      process.stdout.write(' ' + await waiting);
    `;
    try {
      const result = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
        execFile(
          process.execPath,
          ['--input-type=module', '-e', code, String(server.port), String(down.port), PASSWORD],
          { cwd: repo, timeout: 30_000 },
          (error, stdout, stderr) => resolve({ code: error ? ((error.code as number | null) ?? null) : 0, stdout, stderr }),
        );
      });
      assert.equal(result.stderr, '');
      assert.equal(result.stdout, 'Gave 1 [Apple] to Steve E_RCON_CONNECT');
      assert.equal(result.code, 0, 'the child exited on its own, before the 30 s kill (the backoff left behind would hold it 60 s)');
    } finally {
      await down.close();
    }
  });
});
