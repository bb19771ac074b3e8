import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startRconServer } from '../../src/sim/rcon-server.js';
import { SIM_SERVER_ID, SIM_TOKEN, startSellerApi } from '../../src/sim/seller-api.js';
import { waitFor } from '../helpers/wait-for.js';
import { readRepoFile, repoPath } from './repo.js';
import { run, which } from './run.js';

/**
 * The unit's SystemCallFilter against what porter really calls: the CLI runs under strace -f
 * through a delivery over RCON, one through a script executor (/bin/sh, which inherits the
 * filter), health and metrics scrapes and a SIGTERM stop; every system call seen must be in the
 * unit's allow list and outside its deny list. Without a systemd PID 1 the filter itself cannot
 * be applied here, so this is how a dependency that starts needing a denied call gets noticed.
 * Optional: skipped where strace is missing or ptrace is not permitted.
 */

const SCRIPT_SERVER = '2c5f39cb-3fb2-22e3-994f-1127e4ddb538';

async function unavailable(): Promise<string | false> {
  if (!which('strace')) return 'strace is not installed';
  if (!which('systemd-analyze')) return 'systemd-analyze is not installed';
  const probe = await run('strace', ['-qq', '-o', '/dev/null', '/bin/true'], { timeoutMs: 10_000 }).catch(() => undefined);
  return probe?.code === 0 ? false : 'strace cannot trace here (ptrace not permitted)';
}

/** Every system call of every group `systemd-analyze syscall-filter` knows, groups expanded. */
async function syscallGroups(): Promise<(names: string[]) => Set<string>> {
  const listing = (await run('systemd-analyze', ['syscall-filter'], { timeoutMs: 20_000 })).stdout;
  const groups = new Map<string, string[]>();
  let current: string[] | undefined;
  for (const raw of listing.split('\n')) {
    const line = raw.trim();
    if (raw.startsWith('@')) groups.set(line, (current = []));
    else if (current && line !== '' && !line.startsWith('#')) current.push(line);
  }
  const expand = (names: string[], seen = new Set<string>()): Set<string> => {
    const out = new Set<string>();
    for (const name of names) {
      if (!name.startsWith('@')) out.add(name);
      else if (!seen.has(name)) {
        seen.add(name);
        for (const member of expand(groups.get(name) ?? [], seen)) out.add(member);
      }
    }
    return out;
  };
  return expand;
}

const skip = await unavailable();

describe('system calls of a running porter vs the unit SystemCallFilter', { skip }, () => {
  test('every call is allowed by the unit', { timeout: 120_000 }, async (t) => {
    const expand = await syscallGroups();
    const filters = readRepoFile('systemd/porter.service')
      .split('\n')
      .filter((l) => l.startsWith('SystemCallFilter='))
      .map((l) => l.slice('SystemCallFilter='.length));
    const allowed = expand(filters.filter((f) => !f.startsWith('~')).flatMap((f) => f.split(/\s+/)));
    const denied = expand(filters.filter((f) => f.startsWith('~')).flatMap((f) => f.slice(1).split(/\s+/)));

    const api = await startSellerApi({ servers: [SIM_SERVER_ID, SCRIPT_SERVER] });
    const rcon = await startRconServer({ password: 'syscall-test-pw', flavour: 'minecraft', players: ['Steve'] });
    const dir = mkdtempSync(join(tmpdir(), 'porter-syscalls-'));
    try {
      const script = join(dir, 'deliver.sh');
      writeFileSync(script, '#!/bin/sh\necho "delivered: $1"\n', { mode: 0o755 });
      writeFileSync(
        join(dir, 'config.json'),
        JSON.stringify({
          api: { baseUrl: api.url },
          servers: [
            { id: SIM_SERVER_ID, name: 'rcon', executor: { type: 'rcon', host: rcon.host, port: rcon.port } },
            { id: SCRIPT_SERVER, name: 'script', executor: { type: 'script', exec: [script] } },
          ],
          poll: { idleMs: 100 },
          stateDir: dir,
          log: { level: 'info' },
          health: { listen: '127.0.0.1:0' },
        }),
      );
      const trace = join(dir, 'strace.out');
      const child = spawn(
        'strace',
        ['-f', '-qq', '-o', trace, process.execPath, repoPath('dist/bundle/porter.js'), 'run', '-c', join(dir, 'config.json')],
        {
          env: { ...process.env, PORTER_API_TOKEN: SIM_TOKEN, PORTER_RCON_PASSWORD: 'syscall-test-pw' },
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      let output = '';
      child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
      let exitCode: number | null | undefined;
      const exited = new Promise<void>((resolve) => child.on('exit', (code) => resolve(void (exitCode = code))));
      try {
        api.enqueue(SIM_SERVER_ID, { command: 'give Steve diamond 1', player: 'Steve' });
        api.enqueue(SCRIPT_SERVER, { command: 'grant vip steve', offlineExecute: true });
        await waitFor(
          () => {
            if (exitCode !== undefined) throw new Error(`porter exited with ${exitCode}:\n${output}`);
            return api.commands().every((c) => c.status === 'EXECUTED');
          },
          { timeoutMs: 60_000, what: 'both deliveries' },
        );
        const port = /"port":(\d+)[^\n]*health and metrics endpoint listening/.exec(output)?.[1];
        if (port === undefined) t.diagnostic('porter run does not start the health endpoint: /healthz and /metrics not scraped');
        else for (const path of ['/healthz', '/metrics']) await (await fetch(`http://127.0.0.1:${port}${path}`)).text();
      } finally {
        // Signal porter itself: strace's own SIGTERM handling would only detach it. The trace's
        // first line is porter's execve, prefixed with its pid; strace exits with porter's status.
        const pid = Number(/^(\d+)\s/.exec(readFileSync(trace, 'utf8'))?.[1]);
        if (Number.isInteger(pid) && exitCode === undefined) process.kill(pid, 'SIGTERM');
        else child.kill('SIGKILL');
        await exited;
      }
      assert.equal(exitCode, 0, output);

      const used = new Set([...readFileSync(trace, 'utf8').matchAll(/^\d+\s+([a-z0-9_]+)\(/gm)].map((m) => m[1]!));
      t.diagnostic(`${used.size} distinct system calls seen; the unit allows ${[...allowed].filter((n) => !denied.has(n)).length}`);
      assert.ok(used.has('execve') && used.has('connect'), 'the trace covers the run');
      assert.deepEqual([...used].filter((name) => !allowed.has(name) || denied.has(name)).sort(), [], 'calls the unit would refuse');
    } finally {
      await api.close();
      await rcon.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
