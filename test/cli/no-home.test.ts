import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { describe, test } from 'node:test';
import { CLI } from '../integration/harness.js';

/**
 * systemd's DynamicUser= runs porter as a uid with no passwd entry and no HOME: os.homedir() then
 * throws. Nothing porter does at start may ask for a home folder (the sim's state file did, in
 * the help text of `porter sim`, and the service died before it read its config).
 */
describe('a user with no home folder', () => {
  const root = process.getuid?.() === 0;
  for (const args of [['--version'], ['run', '--help'], ['sim', '--help'], ['sim', 'buy', 'say hi']] as const) {
    test(
      `porter ${args.join(' ')} starts as a uid with no passwd entry and no HOME`,
      { skip: !root && 'needs root to run as another uid' },
      async () => {
        const env: NodeJS.ProcessEnv = { PATH: process.env.PATH ?? '/usr/bin:/bin' };
        const result = await new Promise<{ code: number; stderr: string }>((resolve) =>
          execFile(
            process.execPath,
            [CLI, ...args],
            { uid: 61_234, gid: 61_234, env, cwd: '/', timeout: 60_000 },
            (error, _stdout, stderr) => resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stderr }),
          ),
        );
        if (args[0] === 'sim' && args[1] === 'buy') {
          // It needs the state file: a usage error that says what to pass, not a crash.
          assert.equal(result.code, 64, result.stderr);
          assert.match(result.stderr, /no home folder to keep the sim's state file in: pass --state FILE/);
        } else {
          assert.equal(result.code, 0, result.stderr);
        }
      },
    );
  }
});
