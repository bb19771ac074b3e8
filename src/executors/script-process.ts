import { spawn, type ChildProcess } from 'node:child_process';
import type { Clock } from '../clock.js';
import { PorterError } from '../errors.js';
import { TailBuffer } from './script-tail.js';

/**
 * Runs one local executable with an argv array (never a shell) in its own process group, with
 * a deadline that kills the whole group and output capture that keeps only a bounded tail.
 * Shared by the script executor and the script player source.
 */

export interface RunProcessOptions {
  /** Executable first, then its arguments, each passed as-is. */
  readonly argv: readonly string[];
  readonly env: NodeJS.ProcessEnv;
  readonly cwd?: string;
  readonly timeoutMs: number;
  /** After SIGTERM, how long the group has before SIGKILL. */
  readonly killGraceMs: number;
  /** After the process exits, how long to keep reading pipes a grandchild may still hold open. */
  readonly stdioGraceMs: number;
  readonly stdoutLimit: number;
  readonly stderrLimit: number;
  readonly clock: Clock;
  /** Aborting stops the process the same way a timeout does. */
  readonly signal?: AbortSignal;
  /** Called with the process id once it runs (tests use it to check the group is gone). */
  readonly onSpawn?: (pid: number) => void;
}

interface Captured {
  readonly pid: number;
  readonly stdout: TailBuffer;
  readonly stderr: TailBuffer;
  readonly durationMs: number;
}

export type RunResult =
  | (Captured & { readonly kind: 'exited'; readonly code: number | null; readonly signal: NodeJS.Signals | null })
  | (Captured & { readonly kind: 'timed-out' | 'aborted'; readonly killedWith: 'SIGTERM' | 'SIGKILL' });

/** The executable never ran (ENOENT, EACCES, E2BIG, …). */
export class SpawnFailedError extends PorterError {
  override readonly code = 'E_SPAWN_FAILED';
  constructor(
    readonly file: string,
    readonly reason: string,
  ) {
    super(`could not start "${file}": ${reason}`);
  }
}

function describeSpawnError(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  switch (code) {
    case 'ENOENT':
      return 'ENOENT (no such file, or a "#!" interpreter it names is missing)';
    case 'EACCES':
      return 'EACCES (not executable by this user: chmod +x it, and check the folders leading to it)';
    case 'E2BIG':
      return 'E2BIG (the command is too long to pass as an argument)';
    default:
      // Only the code: Node's spawn errors carry spawnargs, which hold the command text.
      return code ?? (error instanceof Error ? error.name : 'unknown error');
  }
}

interface Stopping {
  readonly why: 'timed-out' | 'aborted';
  killedWith: 'SIGTERM' | 'SIGKILL';
  done: Promise<void>;
}

/** Signals the whole process group led by `pid`; a group that is already gone is fine. */
function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
  }
}

function startChild(options: RunProcessOptions): ChildProcess {
  const [file, ...args] = options.argv;
  if (file === undefined) throw new SpawnFailedError('', 'no executable given');
  try {
    return spawn(file, args, {
      shell: false,
      // Its own process group, so a timeout can kill everything it started, not just the leader.
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: options.env,
      ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
      windowsHide: true,
    });
  } catch (error) {
    throw new SpawnFailedError(file, describeSpawnError(error));
  }
}

export async function runProcess(options: RunProcessOptions): Promise<RunResult> {
  const { clock } = options;
  const started = clock.now();
  const file = options.argv[0] ?? '';
  const child = startChild(options);
  const stdout = new TailBuffer(options.stdoutLimit);
  const stderr = new TailBuffer(options.stderrLimit);
  child.stdout?.on('data', (chunk: Buffer) => stdout.push(chunk));
  child.stderr?.on('data', (chunk: Buffer) => stderr.push(chunk));
  // A grandchild killed mid-write, or our own destroy() below, must not surface as a crash.
  child.stdout?.on('error', () => {});
  child.stderr?.on('error', () => {});

  let hasExited = false;
  const exited = new Promise<[number | null, NodeJS.Signals | null]>((resolve) => {
    child.once('exit', (code, signal) => {
      hasExited = true;
      resolve([code, signal]);
    });
  });
  const stdioClosed = new Promise<void>((resolve) => child.once('close', () => resolve()));

  await new Promise<void>((resolve, reject) => {
    const onError = (error: Error) => {
      child.off('spawn', onSpawn);
      reject(new SpawnFailedError(file, describeSpawnError(error)));
    };
    const onSpawn = () => {
      child.off('error', onError);
      // Later errors (a failed kill) are not outcomes; keep them from crashing the process.
      child.on('error', () => {});
      resolve();
    };
    child.once('error', onError);
    child.once('spawn', onSpawn);
  });

  const pid = child.pid!;
  options.onSpawn?.(pid);
  const timers = new AbortController();
  const nap = (ms: number) => clock.sleep(ms, timers.signal).then(
    () => true,
    () => false,
  );

  let abandon: (value: [number | null, NodeJS.Signals | null]) => void = () => {};
  const abandoned = new Promise<[number | null, NodeJS.Signals | null]>((resolve) => {
    abandon = resolve;
  });

  let stopping: Stopping | undefined;
  const stop = (why: Stopping['why']) => {
    if (stopping || hasExited) return;
    const state: Stopping = { why, killedWith: 'SIGTERM', done: Promise.resolve() };
    stopping = state;
    state.done = (async () => {
      signalGroup(pid, 'SIGTERM');
      const leaderGone = await Promise.race([exited.then(() => true), nap(options.killGraceMs).then(() => false)]);
      if (!leaderGone) state.killedWith = 'SIGKILL';
      // Always, even when the leader obeyed SIGTERM: children may ignore it or outlive it.
      signalGroup(pid, 'SIGKILL');
      // SIGKILL cannot be ignored; the bound only guards against a process stuck in the kernel.
      if (!(await Promise.race([exited.then(() => true), nap(options.killGraceMs).then(() => false)]))) abandon([null, 'SIGKILL']);
    })();
  };

  void nap(options.timeoutMs).then((elapsed) => {
    if (elapsed) stop('timed-out');
  });
  const onAbort = () => stop('aborted');
  if (options.signal?.aborted) onAbort();
  else options.signal?.addEventListener('abort', onAbort, { once: true });

  try {
    // After a kill the leader is waited for only within a bound (a process stuck in the kernel
    // cannot be killed); `abandoned` ends that wait.
    const [code, signal] = await Promise.race([exited, abandoned]);
    // A forked grandchild may hold the pipes open long after the script exited: read what
    // arrives shortly after the exit, then stop waiting.
    await Promise.race([stdioClosed, nap(options.stdioGraceMs)]);
    if (stopping) await stopping.done;
    const captured = { pid, stdout, stderr, durationMs: clock.now() - started };
    if (stopping) return { ...captured, kind: stopping.why, killedWith: stopping.killedWith };
    return { ...captured, kind: 'exited', code, signal };
  } finally {
    timers.abort();
    options.signal?.removeEventListener('abort', onAbort);
    child.stdout?.destroy();
    child.stderr?.destroy();
  }
}
