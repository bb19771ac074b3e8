import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { after, describe, test } from 'node:test';
import { cliForAnotherUser } from '../helpers/another-user.js';
import { CLI } from './harness.js';

/**
 * systemd's DynamicUser= runs porter as a uid with no passwd entry and no HOME: os.homedir() then
 * throws. Nothing porter does at start may ask for a home folder (the sim's state file did, in
 * the help text of `porter sim`, and the service died before it read its config). That uid runs
 * a copy of the bundle every user may read: the checkout may be in a home folder of mode 0700.
 */
describe('a user with no home folder', () => {
  const foreign = process.getuid?.() === 0 ? cliForAnotherUser(CLI) : { skip: 'needs root to run as another uid' };
  after(() => {
    if ('dispose' in foreign) foreign.dispose();
  });
  for (const args of [['--version'], ['run', '--help'], ['sim', '--help'], ['sim', 'buy', 'say hi']] as const) {
    test(
      `porter ${args.join(' ')} starts as a uid with no passwd entry and no HOME`,
      { skip: 'skip' in foreign && foreign.skip },
      async () => {
        assert.ok('cli' in foreign);
        const env: NodeJS.ProcessEnv = { PATH: process.env.PATH ?? '/usr/bin:/bin' };
        const result = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) =>
          execFile(
            process.execPath,
            [foreign.cli, ...args],
            { uid: 61_234, gid: 61_234, env, cwd: '/', timeout: 60_000 },
            (error, stdout, stderr) => resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
          ),
        );
        if (args[0] === 'sim' && args[1] === 'buy') {
          // It needs the state file: a usage error that says what to pass, not a crash.
          assert.equal(result.code, 64, result.stderr);
          assert.match(result.stderr, /no home folder to keep the sim's state file in: pass --state FILE/);
        } else {
          assert.equal(result.code, 0, result.stderr);
        }
        // The copy is the same porter: its version is the checkout's, not "unknown".
        if (args[0] === '--version') assert.match(result.stdout.trim(), /^\d+\.\d+\.\d+/);
      },
    );
  }
});
