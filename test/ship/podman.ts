import { spawn } from 'node:child_process';
import { run, which, type RunResult } from './run.js';

/**
 * The container engine of the ship tests: Debian's podman with runc. On these machines podman's
 * default runtime (crun) refuses the cgroup setup, raising the open-file and process limits is
 * refused, only the host network works, and no systemd runs to time health checks (they are run
 * on demand with `podman healthcheck run`). Every call here says so with the same flags.
 */

/** What this machine's podman needs on every run and build: runc, and limits it may not raise. */
export const ENGINE_FLAGS = ['--runtime', 'runc', '--ulimit', 'nofile=1024:1024', '--ulimit', 'nproc=1024:1024'] as const;

/** Flags for `podman run` and `podman create`. */
export const RUN_FLAGS = [...ENGINE_FLAGS, '--network', 'host'] as const;

/** Flags for `podman build`: the same runtime, network and limits, and the Docker image format (OCI has no HEALTHCHECK). */
export const BUILD_FLAGS = [...RUN_FLAGS, '--format', 'docker'] as const;

const ENV = { ...process.env, DISABLE_HC_SYSTEMD: 'true' };

/** Runs podman without a shell; a failed command is an error naming it, unless `allowFailure`. */
export async function podman(
  args: readonly string[],
  options: { timeoutMs?: number; allowFailure?: boolean; input?: string } = {},
): Promise<RunResult> {
  const result = await run('podman', args, { env: ENV, timeoutMs: options.timeoutMs ?? 120_000, input: options.input });
  if (result.code !== 0 && !options.allowFailure) {
    throw new Error(`podman ${args.slice(0, 3).join(' ')} … exited ${result.code ?? result.signal}:\n${result.stderr.slice(-4000)}`);
  }
  return result;
}

/** A podman command left running (a `podman stop` that waits for the drain); resolves with its exit code. */
export function podmanInBackground(args: readonly string[]): Promise<number | null> {
  const child = spawn('podman', args, { env: ENV, stdio: 'ignore' });
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve(code));
  });
}

/**
 * Why the container tests cannot run here, or false. They need root (rootful podman, as the
 * guide runs it), podman, runc, and for the stand-in base image debootstrap. In CI
 * (PORTER_REQUIRE_SHIP_TOOLS=1) a missing one is a failure, not a skip.
 */
export function engineMissing(): string | false {
  const missing = ['podman', 'runc', 'debootstrap', 'flock'].filter((tool) => !which(tool));
  let reason: string | false = false;
  if (process.getuid?.() !== 0) reason = 'the container tests run podman as root';
  else if (missing.length > 0) reason = `${missing.join(', ')} not installed (Debian: apt-get install podman runc debootstrap)`;
  if (reason && process.env.PORTER_REQUIRE_SHIP_TOOLS === '1') throw new Error(`${reason}; CI requires it`);
  return reason;
}

/** A container's logs, stdout and stderr together. */
export async function logsOf(name: string): Promise<string> {
  const result = await podman(['logs', name], { allowFailure: true });
  return `${result.stdout}${result.stderr}`;
}

/** A JSON log line: `event` names it (docs/operations.md#log-events), `msg` is for people. */
type LogLine = Record<string, unknown> & { event?: string; msg?: string };

/** The JSON log lines porter wrote (pino), parsed; other lines are skipped. */
export function logLines(text: string): LogLine[] {
  const lines: LogLine[] = [];
  for (const line of text.split(/\r?\n/)) {
    if (!line.startsWith('{')) continue;
    try {
      lines.push(JSON.parse(line) as LogLine);
    } catch {
      // not a log line
    }
  }
  return lines;
}

/** `podman top` rows (the container's own pid numbering), as a list of records. */
export async function processesOf(name: string): Promise<Array<{ pid: number; ppid: number; state: string; comm: string; hpid: number }>> {
  const result = await podman(['top', name, 'pid', 'ppid', 'state', 'comm', 'hpid'], { allowFailure: true });
  if (result.code !== 0) return [];
  return result.stdout
    .trim()
    .split('\n')
    .slice(1)
    .map((line) => line.trim().split(/\s+/))
    .map(([pid, ppid, state, comm, hpid]) => ({ pid: Number(pid), ppid: Number(ppid), state: state!, comm: comm!, hpid: Number(hpid) }));
}

/** Removes containers and volumes a test made, ignoring those already gone. */
export async function removeAll(containers: readonly string[], volumes: readonly string[] = []): Promise<void> {
  for (const name of containers) await podman(['rm', '-f', '-t', '0', name], { allowFailure: true });
  for (const name of volumes) await podman(['volume', 'rm', '-f', name], { allowFailure: true });
}
