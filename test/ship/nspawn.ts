import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { waitFor } from '../helpers/wait-for.js';
import { run, type RunResult } from './run.js';

/**
 * A throw-away machine booted by systemd-nspawn from this host's own /usr (read-only), with /etc
 * and /var on tmpfs and the host's network, so a simulator on 127.0.0.1 is reachable from it.
 * `--register=no --keep-unit`: no machined on the host's bus is needed; `systemd.firstboot=off`:
 * no first-boot wizard waits for a terminal. Commands run inside with nsenter.
 */
export interface Container {
  /** Host pid of the container's PID 1 (systemd). */
  readonly pid: number;
  /** The container's root seen from the host: /proc/PID/root. */
  readonly root: string;
  /** Runs a program inside, as root, without a shell. */
  exec(args: readonly string[], options?: { env?: Record<string, string>; timeoutMs?: number }): Promise<RunResult>;
  /** Kills every process of the container and waits for nspawn to go. */
  kill(): Promise<void>;
}

/** PATH inside: the system's folders only, nothing of the host's environment. */
const PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/** Pids whose kill is still owed when this process exits before kill() ran. */
const owed = new Set<number>();
process.on('exit', () => {
  for (const pid of owed) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
});

/** Boots the container; throws with nspawn's output when it does not come up within `timeoutMs`. */
export async function bootContainer(options: { bindReadOnly: Record<string, string>; timeoutMs: number }): Promise<Container> {
  const binds = Object.entries(options.bindReadOnly).map(([host, inside]) => `--bind-ro=${host}:${inside}`);
  const nspawn = spawn(
    'systemd-nspawn',
    [
      '--quiet',
      '--volatile=yes',
      '-D',
      '/',
      '--register=no',
      '--keep-unit',
      '--console=read-only',
      ...binds,
      '-b',
      '--',
      'systemd.firstboot=off',
      // Only systemd's own base, not the services this host has enabled (they would share its network).
      'systemd.unit=basic.target',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  nspawn.stdout.setEncoding('utf8').on('data', (chunk: string) => (output = (output + chunk).slice(-20_000)));
  nspawn.stderr.setEncoding('utf8').on('data', (chunk: string) => (output = (output + chunk).slice(-20_000)));
  let exited: string | undefined;
  const gone = new Promise<void>((resolve) =>
    nspawn.on('close', (code, signal) => {
      exited = `systemd-nspawn exited (${code ?? signal})`;
      resolve();
    }),
  );
  if (nspawn.pid !== undefined) owed.add(nspawn.pid);
  let pid: number | undefined;
  const container: Container = {
    get pid() {
      return pid ?? 0;
    },
    get root() {
      return `/proc/${pid}/root`;
    },
    exec: (args, execOptions = {}) =>
      run('nsenter', ['-t', String(pid), '-a', ...args], {
        env: { PATH, LANG: 'C.UTF-8', ...execOptions.env },
        timeoutMs: execOptions.timeoutMs ?? 60_000,
      }),
    kill: () => killContainer(nspawn, pid, gone),
  };
  try {
    pid = await waitFor(
      () => {
        if (exited) throw new Error(`${exited} before the container's systemd started:\n${output}`);
        return containerInit(nspawn.pid!);
      },
      { timeoutMs: options.timeoutMs, intervalMs: 50, what: "the container's PID 1" },
    );
    owed.add(pid);
    // "offline" until systemd listens; then --wait returns when the boot is done. "degraded" is a
    // finished boot too: a host service that cannot start in a container (no hardware, its port
    // taken by the host) is not this test's concern.
    let state = '';
    await waitFor(
      async () => {
        if (exited) throw new Error(`${exited} during the boot:\n${output}`);
        const result = await container.exec(['systemctl', 'is-system-running', '--wait'], { timeoutMs: options.timeoutMs });
        state = `${result.stdout}${result.stderr}`.trim();
        return /^(running|degraded)$/.test(state);
      },
      { timeoutMs: options.timeoutMs, intervalMs: 100, what: `the container's boot (systemctl is-system-running: ${state})` },
    );
    return container;
  } catch (error) {
    await container.kill();
    throw error;
  }
}

/** The descendant of nspawn that is PID 1 of its own pid namespace: the innermost NSpid is 1. */
function containerInit(root: number): number | undefined {
  const queue = [root];
  while (queue.length > 0) {
    const pid = queue.shift()!;
    try {
      const nspids = /^NSpid:\s+(.+)$/m
        .exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]
        ?.trim()
        .split(/\s+/);
      if (pid !== root && nspids && nspids.length > 1 && nspids.at(-1) === '1') return pid;
      for (const child of readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/)) {
        if (child) queue.push(Number(child));
      }
    } catch {
      // the process went while we looked
    }
  }
  return undefined;
}

/**
 * SIGKILL to the container's PID 1 ends every process in its pid namespace at once (killing
 * nspawn alone would leave the container running); nspawn then exits. nspawn itself is killed too
 * if it has not gone within the bound.
 */
async function killContainer(nspawn: ChildProcess, pid: number | undefined, gone: Promise<void>): Promise<void> {
  if (pid !== undefined) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
    owed.delete(pid);
  }
  const bound = new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), 15_000).unref());
  if ((await Promise.race([gone, bound])) === 'timeout') {
    nspawn.kill('SIGKILL');
    await gone;
  }
  if (nspawn.pid !== undefined) owed.delete(nspawn.pid);
}
