import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cliForAnotherUser } from '../helpers/another-user.js';
import { CLI, SIM_SERVER_ID } from './harness.js';

/**
 * Over the real CLI: a state directory chmodded open (0777) whose files porter's
 * user cannot read, because another uid made them (a volume first used by a container running as
 * another user, a restore run as root). It used to end with exit 1 and a bare `EACCES: permission
 * denied, open '…/porter.lock'`; it is exit 78 naming the files, their owner and the fix, as for the
 * other permission cases, for `porter run` and `porter check` alike.
 */
describe("a state directory of porter's whose files belong to another uid", () => {
  const foreign = process.getuid?.() === 0 ? cliForAnotherUser(CLI) : { skip: 'needs root to run porter as another uid' };
  const dir = mkdtempSync(join(tmpdir(), 'porter-state-owner-'));
  after(() => {
    if ('dispose' in foreign) foreign.dispose();
    rmSync(dir, { recursive: true, force: true });
  });

  test('run and check exit 78 naming the files and the fix', { skip: 'skip' in foreign && foreign.skip }, async () => {
    assert.ok('cli' in foreign);
    chmodSync(dir, 0o755);
    const state = join(dir, 'state');
    mkdirSync(state);
    chmodSync(state, 0o777);
    // Root's files, as another porter (run as root) left them.
    writeFileSync(join(state, 'porter.lock'), '{"pid":4242,"start":"1"}\n', { mode: 0o600 });
    writeFileSync(join(state, 'journal.json'), '{}', { mode: 0o600 });
    const config = join(dir, 'config.json');
    writeFileSync(
      config,
      JSON.stringify({
        api: { baseUrl: 'http://127.0.0.1:9', token: 'state-owner-token-3k9x' },
        servers: [{ id: SIM_SERVER_ID, executor: { type: 'rcon', host: '127.0.0.1', port: 9, password: 'pw-state-owner-8d2' } }],
        stateDir: state,
      }),
    );
    chmodSync(config, 0o644);
    const env: NodeJS.ProcessEnv = { PATH: process.env.PATH ?? '/usr/bin:/bin' };
    for (const command of ['run', 'check']) {
      const result = await new Promise<{ code: number; output: string }>((resolve) =>
        execFile(
          process.execPath,
          [foreign.cli, command, '-c', config],
          { uid: 61_235, gid: 61_235, env, cwd: '/', timeout: 60_000 },
          (error, stdout, stderr) => resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, output: stdout + stderr }),
        ),
      );
      assert.equal(result.code, 78, `${command}: ${result.output}`);
      assert.match(
        result.output,
        new RegExp(
          `state files ${state}/journal\\.json, ${state}/porter\\.lock belong to uid 0, and porter's user \\(uid 61235\\) may not read and write them \\(EACCES\\): give the state directory's files to porter's user \\(as root: chown -R 61235 ${state}\\), or run porter as the user that owns them`,
        ),
        command,
      );
      assert.doesNotMatch(result.output, /state-owner-token|pw-state-owner/, 'no secret in the output');
    }
  });
});
