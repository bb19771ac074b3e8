import { spawn, type ChildProcess } from 'node:child_process';
import { startDeadline, type Clock } from '../../clock.js';
import { PorterError } from '../../errors.js';
import { TailBuffer } from './tail.js';

/**
 * Runs one local executable with an argv array (never a shell) in its own process group, with
 * a deadline that kills the whole group and output capture that keeps only a bounded tail.
 * Shared by the script executor and the script player source.
 */

interface RunProcessOptions {
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

/**
 * Spawn errors where the OS refused a resource for the moment (processes, open files, memory, or
 * the file is being written): the same spawn may work shortly, so they are retried with backoff.
 * Every other error (ENOENT, EACCES, E2BIG, ENOTDIR, ELOOP, ENAMETOOLONG, ENOEXEC, an invalid
 * argument, …) follows from the file or the command and would fail the same way every time.
 */
const TRANSIENT_SPAWN_ERRORS: ReadonlySet<string> = new Set(['EAGAIN', 'EMFILE', 'ENFILE', 'ENOMEM', 'ETXTBSY']);

/** The executable never ran (ENOENT, EACCES, E2BIG, …). */
export class SpawnFailedError extends PorterError {
  override readonly code = 'E_SPAWN_FAILED';
  /** The errno code (`ENOENT`), or the error's name when it had none. */
  readonly errno: string;
  /** True when trying again shortly may work (see TRANSIENT_SPAWN_ERRORS). */
  readonly transient: boolean;

  constructor(
    readonly file: string,
    error: unknown,
  ) {
    const errno = (error as NodeJS.ErrnoException | undefined)?.code ?? (error instanceof Error ? error.name : 'unknown error');
    super(`could not start "${file}": ${describeSpawnError(errno)}`);
    this.errno = errno;
    this.transient = TRANSIENT_SPAWN_ERRORS.has(errno);
  }
}

/** Only the code and what it means here: Node's spawn errors carry spawnargs, which hold the command text. */
function describeSpawnError(errno: string): string {
  switch (errno) {
    case 'ENOENT':
      return 'ENOENT (no such file, or a "#!" interpreter it names is missing)';
    case 'EACCES':
      return 'EACCES (not executable by this user, or a folder: chmod +x it, and check the folders leading to it and noexec mounts)';
    case 'EPERM':
      return 'EPERM (the system does not permit running it: check its mount options and any security policy)';
    case 'ENOTDIR':
      return 'ENOTDIR (a part of its path is a file, not a folder)';
    case 'ELOOP':
      return 'ELOOP (too many symbolic links in its path)';
    case 'ENAMETOOLONG':
      return 'ENAMETOOLONG (its path is too long)';
    case 'ENOEXEC':
      return 'ENOEXEC (not a program this system can run: give a script a "#!" line naming its interpreter)';
    case 'E2BIG':
      return 'E2BIG (the command is too long to pass as an argument: Linux allows 128 KiB per argument and about 2 MB for all arguments and the environment)';
    case 'EAGAIN':
      return 'EAGAIN (the system refused a new process for now: too many processes for this user?)';
    case 'EMFILE':
      return 'EMFILE (porter has too many open files for now)';
    case 'ENFILE':
      return 'ENFILE (the system has too many open files for now)';
    case 'ENOMEM':
      return 'ENOMEM (not enough memory to start it for now)';
    case 'ETXTBSY':
      return 'ETXTBSY (the file is open for writing: is it being updated?)';
    default:
      return errno;
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
  if (file === undefined) throw new SpawnFailedError('', { code: 'ENOENT' });
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
    throw new SpawnFailedError(file, error);
  }
}

type Exit = [code: number | null, signal: NodeJS.Signals | null];

/** What the child writes (a bounded tail of each stream) and when it exits and closes its pipes. */
function watchChild(child: ChildProcess, options: RunProcessOptions) {
  const stdout = new TailBuffer(options.stdoutLimit);
  const stderr = new TailBuffer(options.stderrLimit);
  child.stdout?.on('data', (chunk: Buffer) => stdout.push(chunk));
  child.stderr?.on('data', (chunk: Buffer) => stderr.push(chunk));
  // A grandchild killed mid-write, or our own destroy() below, must not surface as a crash.
  child.stdout?.on('error', () => {});
  child.stderr?.on('error', () => {});
  let hasExited = false;
  const exited = new Promise<Exit>((resolve) => {
    child.once('exit', (code, signal) => {
      hasExited = true;
      resolve([code, signal]);
    });
  });
  const stdioClosed = new Promise<void>((resolve) => child.once('close', () => resolve()));
  return { stdout, stderr, exited, stdioClosed, hasExited: () => hasExited };
}

/** Resolves once the child runs; rejects with SpawnFailedError when it never did. */
function spawned(child: ChildProcess, file: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const onError = (error: Error) => {
      child.off('spawn', onSpawn);
      reject(new SpawnFailedError(file, error));
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
}

/**
 * Stopping the group: SIGTERM, SIGKILL after the grace, and a bounded wait for the leader after
 * that (`abandoned` resolves when even SIGKILL did not end it, a process stuck in the kernel).
 */
function groupStopper(
  pid: number,
  exited: Promise<Exit>,
  hasExited: () => boolean,
  killGraceMs: number,
  nap: (ms: number) => Promise<boolean>,
) {
  let abandon: (value: Exit) => void = () => {};
  const abandoned = new Promise<Exit>((resolve) => {
    abandon = resolve;
  });
  const exitsWithin = (ms: number) => Promise.race([exited.then(() => true), nap(ms).then(() => false)]);
  let stopping: Stopping | undefined;
  const stop = (why: Stopping['why']) => {
    if (stopping || hasExited()) return;
    const state: Stopping = { why, killedWith: 'SIGTERM', done: Promise.resolve() };
    stopping = state;
    state.done = (async () => {
      signalGroup(pid, 'SIGTERM');
      if (!(await exitsWithin(killGraceMs))) state.killedWith = 'SIGKILL';
      // Always, even when the leader obeyed SIGTERM: children may ignore it or outlive it.
      signalGroup(pid, 'SIGKILL');
      // SIGKILL cannot be ignored; the bound only guards against a process stuck in the kernel.
      if (!(await exitsWithin(killGraceMs))) abandon([null, 'SIGKILL']);
    })();
  };
  return { stop, abandoned, stopping: () => stopping };
}

export async function runProcess(options: RunProcessOptions): Promise<RunResult> {
  const { clock } = options;
  const started = clock.now();
  const child = startChild(options);
  const { stdout, stderr, exited, stdioClosed, hasExited } = watchChild(child, options);
  await spawned(child, options.argv[0] ?? '');

  const pid = child.pid!;
  options.onSpawn?.(pid);
  const timers = new AbortController();
  const nap = (ms: number) =>
    clock.sleep(ms, timers.signal).then(
      () => true,
      () => false,
    );
  const group = groupStopper(pid, exited, hasExited, options.killGraceMs, nap);

  // A deadline that yields (startDeadline): a script that exited while porter was frozen is seen
  // exited, not killed for its time.
  const cancelDeadline = startDeadline(clock, options.timeoutMs, () => group.stop('timed-out'));
  timers.signal.addEventListener('abort', cancelDeadline, { once: true });
  const onAbort = () => group.stop('aborted');
  if (options.signal?.aborted) onAbort();
  else options.signal?.addEventListener('abort', onAbort, { once: true });

  try {
    // After a kill the leader is waited for only within a bound (a process stuck in the kernel
    // cannot be killed); `abandoned` ends that wait.
    const [code, signal] = await Promise.race([exited, group.abandoned]);
    // A forked grandchild may hold the pipes open long after the script exited: read what
    // arrives shortly after the exit, then stop waiting.
    await Promise.race([stdioClosed, nap(options.stdioGraceMs)]);
    const stopping = group.stopping();
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
