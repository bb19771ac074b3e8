import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { describe, test } from 'node:test';

/**
 * A command line porter cannot use is exit 64 (EX_USAGE) for every command, with a message naming
 * what is wrong; help and --version are 0. A wrong command line must never look like a
 * configuration error (78) or a crash (1).
 */

const BIN = join(import.meta.dirname, '../../bundle/porter.js');

function porter(args: readonly string[]): Promise<{ code: number; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], { timeout: 30_000 }, (error, _stdout, stderr) =>
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stderr }),
    );
  });
}

describe('usage errors', () => {
  for (const [args, message] of [
    [['run', '--bogus'], /unknown option '--bogus'/],
    [['check', '-c'], /option '-c, --config <file>' argument missing/],
    [['rcon', '-c', 'x.json'], /missing required argument/],
    [['deliver'], /unknown command 'deliver'/],
    [['init', '--nope'], /unknown option '--nope'/],
    [['init', '--rcon-port', '25575x'], /option '--rcon-port <port>' argument '25575x' is invalid\. expected a port, 1 to 65535/],
    [['sim', '--game', 'tetris'], /argument 'tetris' is invalid\. Allowed choices are minecraft, /],
    [['sim', 'buy'], /missing required argument 'command'/],
    [['sim', 'buy', 'say hi', '--bogus'], /unknown option '--bogus'/],
    [['demo', '--join-after', 'abc'], /option '--join-after <ms>' argument 'abc' is invalid\. expected a whole number of milliseconds/],
  ] as const) {
    test(`porter ${args.join(' ')}: exit 64, naming it`, async () => {
      const result = await porter(args);
      assert.equal(result.code, 64, result.stderr);
      assert.match(result.stderr, message);
    });
  }

  test('help and --version: exit 0', async () => {
    assert.equal((await porter(['--help'])).code, 0);
    assert.equal((await porter(['--version'])).code, 0);
    assert.equal((await porter(['run', '--help'])).code, 0);
    assert.equal((await porter(['sim', 'buy', '--help'])).code, 0);
  });
});
