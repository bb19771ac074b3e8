import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { run } from './run.js';

/**
 * Why systemd/porter.service says MemoryDenyWriteExecute=no. That setting forbids making a
 * page executable once it was writable (systemd uses the kernel's PR_SET_MDWE where it can,
 * else a seccomp filter with the same rule). Linux ≥ 6.3 lets any process opt in with
 * prctl(PR_SET_MDWE), so this test applies it through Debian's python3 and starts node under it.
 * If a future Node starts fine here, the test fails: time to switch the setting on.
 */

const PYTHON = '/usr/bin/python3';
const underMdwe = `
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
if libc.prctl(65, 1, 0, 0, 0) != 0:  # PR_SET_MDWE, PR_MDWE_REFUSE_EXEC_GAIN
    print("unsupported", ctypes.get_errno())
    sys.exit(3)
os.execv(sys.argv[1], sys.argv[1:])
`;

async function mdweSupported(): Promise<boolean> {
  if (!existsSync(PYTHON)) return false;
  const probe = await run(PYTHON, ['-c', underMdwe, '/bin/true'], { timeoutMs: 10_000 });
  return probe.code === 0;
}

const supported = await mdweSupported();

describe(
  'MemoryDenyWriteExecute and Node',
  { skip: supported ? false : 'kernel without PR_SET_MDWE (Linux < 6.3) or no /usr/bin/python3' },
  () => {
    test('node aborts as soon as V8 compiles code when W^X is enforced', async () => {
      const script = 'let s = 0; for (let i = 0; i < 1e6; i++) s += i; console.log(s)';
      const result = await run(PYTHON, ['-c', underMdwe, process.execPath, '-e', script], { timeoutMs: 30_000 });
      assert.notEqual(result.code, 0, `node ran under PR_SET_MDWE: MemoryDenyWriteExecute=yes may now work\n${result.stdout}`);
      assert.match(result.stderr, /SetPermissions|Fatal error|Check failed/);
    });

    test('node --jitless survives it but has no WebAssembly, which undici needs for HTTP', async () => {
      const script = 'console.log(typeof WebAssembly)';
      const result = await run(PYTHON, ['-c', underMdwe, process.execPath, '--jitless', '-e', script], { timeoutMs: 30_000 });
      assert.equal(result.code, 0, result.stderr);
      assert.equal(result.stdout.trim(), 'undefined');
    });
  },
);
