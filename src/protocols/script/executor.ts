import { linkSignals } from '../../abort.js';
import { constants } from 'node:fs';
import { access } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from 'pino';
import { systemClock, type Clock } from '../../clock.js';
import { CommandFailedError, CommandRefusedError, ConfigError, NotSentError, OutcomeUnknownError } from '../../errors.js';
import { backoffDelay, type BackoffPolicy } from '../../net/backoff.js';
import { assertSingleLine, type ExecutionContext, type Executor, type ExecutorStats } from '../executor.js';
import { scriptEnv } from './env.js';
import { runProcess, SpawnFailedError, type RunResult } from './process.js';
import { lastLines } from './tail.js';
import type { ResolvedOf } from '../transport-descriptor.js';
import type { scriptTransport } from './descriptor.js';

export type ScriptExecutorConfig = ResolvedOf<typeof scriptTransport>;

interface ScriptExecutorDeps {
  readonly logger: Logger;
  readonly clock?: Clock;
  /** Working directory of the script; default porter's own. */
  readonly cwd?: string;
  /** Environment the script's is built from (secrets removed); default process.env. */
  readonly env?: NodeJS.ProcessEnv;
  /** After SIGTERM on timeout, how long before SIGKILL. Default 2000 ms. */
  readonly killGraceMs?: number;
  /** After the script exits, how long to wait for pipes a background child still holds. Default 250 ms. */
  readonly stdioGraceMs?: number;
  /** stdout kept in memory (its tail); default 64 KiB. */
  readonly maxStdoutBytes?: number;
  /** stderr kept in memory (its tail); default 16 KiB. */
  readonly maxStderrBytes?: number;
}

/** Bounds of the stderr excerpt in a failure reason: enough to diagnose, small enough to report. */
const STDERR_LINES = 20;
const STDERR_CHARS = 2048;

/**
 * Pause after a spawn the OS refused for the moment (EAGAIN, EMFILE, …): the delivery loop waits
 * for readiness before trying again, so a busy system is not hit with a spawn per millisecond.
 */
const SPAWN_RETRY_BACKOFF: BackoffPolicy = { initialMs: 100, maxMs: 2000 };

/**
 * The script could not be started, and would not start on a retry either (no such file, not
 * executable, the command too long for an argument): nothing ran, and the command fails at once.
 * A CommandRefusedError to the delivery loop: failed, never sent.
 */
export class ScriptNotStartedError extends CommandRefusedError {
  override readonly code: string = 'E_SCRIPT_NOT_STARTED';
}

/**
 * Runs a local executable per command (docs/design.md#executors): the command is its last argument, never
 * parsed by a shell; exit 0 is done, anything else failed; a timeout kills its process group.
 */
export class ScriptExecutor implements Executor {
  readonly #config: ScriptExecutorConfig;
  readonly #deps: ScriptExecutorDeps;
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #stopAll = new AbortController();
  readonly #running = new Set<Promise<unknown>>();
  /** Spawns refused for the moment in a row, and when the next may be tried. */
  #transientSpawnFailures = 0;
  #spawnRetryAt = 0;

  constructor(config: ScriptExecutorConfig, deps: ScriptExecutorDeps) {
    this.#config = config;
    this.#deps = deps;
    this.#clock = deps.clock ?? systemClock;
    this.#logger = deps.logger.child({ executor: 'script' });
  }

  get #file(): string {
    return this.#config.exec[0]!;
  }

  get connectedText(): string {
    return `script ${this.#file} is executable`;
  }

  /** Checks the executable exists and may be run, so `porter check` catches a wrong path. */
  async connect(): Promise<void> {
    const file = this.#file;
    const candidates = file.includes('/')
      ? [path.resolve(this.#deps.cwd ?? process.cwd(), file)]
      : ((this.#deps.env ?? process.env).PATH?.split(path.delimiter)
          .filter(Boolean)
          .map((dir) => path.join(dir, file)) ?? []);
    for (const candidate of candidates) {
      try {
        await access(candidate, constants.X_OK);
        return;
      } catch {
        // try the next PATH entry
      }
    }
    throw new ConfigError(
      `servers[].executor.exec[0] "${file}" is not an executable file${file.includes('/') ? '' : ' on PATH'}: ` +
        "give the path of the delivery script (relative paths resolve against the config file's folder) and make it executable (chmod +x)",
    );
  }

  /** True unless the OS just refused a spawn for the moment (then after a short backoff). */
  isReady(): boolean {
    return this.#clock.now() >= this.#spawnRetryAt;
  }

  async waitReady(signal?: AbortSignal): Promise<void> {
    signal?.throwIfAborted();
    const wait = this.#spawnRetryAt - this.#clock.now();
    if (wait > 0) await this.#clock.sleep(wait, signal);
  }

  async execute(command: string, context: ExecutionContext, signal?: AbortSignal): Promise<string> {
    assertSingleLine(command);
    if (signal?.aborted || this.#stopAll.signal.aborted) {
      throw new NotSentError(`script "${this.#file}" was not started: porter is stopping`);
    }
    const run = this.#run(command, context, signal);
    this.#running.add(run);
    try {
      return this.#interpret(await run, context);
    } finally {
      this.#running.delete(run);
    }
  }

  async #run(command: string, context: ExecutionContext, signal?: AbortSignal): Promise<RunResult> {
    const stop = linkSignals(signal, this.#stopAll.signal);
    this.#logger.debug({ event: 'script.started', id: context.id, file: this.#file }, 'starting delivery script');
    let result: RunResult;
    try {
      result = await runProcess({
        argv: [...this.#config.exec, command],
        env: scriptEnv(this.#deps.env ?? process.env, {
          PORTER_COMMAND: command,
          PORTER_COMMAND_ID: context.id,
          PORTER_SERVER_ID: context.serverId,
        }),
        ...(this.#deps.cwd === undefined ? {} : { cwd: this.#deps.cwd }),
        timeoutMs: this.#config.timeoutMs,
        killGraceMs: this.#deps.killGraceMs ?? 2000,
        stdioGraceMs: this.#deps.stdioGraceMs ?? 250,
        stdoutLimit: this.#deps.maxStdoutBytes ?? 64 * 1024,
        stderrLimit: this.#deps.maxStderrBytes ?? 16 * 1024,
        clock: this.#clock,
        signal: stop.signal,
      });
    } catch (error) {
      if (error instanceof SpawnFailedError) throw this.#notStarted(error, command);
      throw error;
    } finally {
      stop.release();
    }
    this.#transientSpawnFailures = 0;
    return result;
  }

  /** What a failed spawn means for the command: try again shortly, or fail it now with the real reason. */
  #notStarted(error: SpawnFailedError, command: string): Error {
    if (error.transient) {
      this.#transientSpawnFailures += 1;
      this.#spawnRetryAt = this.#clock.now() + backoffDelay(this.#transientSpawnFailures, SPAWN_RETRY_BACKOFF);
      return new NotSentError(`delivery script ${error.message}; the command was not run and is tried again shortly`);
    }
    const advice =
      error.errno === 'E2BIG'
        ? `the command is ${Buffer.byteLength(command)} bytes; shorten it in the store, since it cannot be passed to a script`
        : "check servers[].executor.exec[0]: it must name an executable file that porter's user may run";
    return new ScriptNotStartedError(`delivery script ${error.message}; the command was not run: ${advice}`);
  }

  #interpret(result: RunResult, context: ExecutionContext): string {
    const log = { id: context.id, file: this.#file, pid: result.pid, ms: result.durationMs };
    if (result.kind !== 'exited') {
      this.#logger.warn(
        { event: 'script.killed', ...log, killedWith: result.killedWith },
        `delivery script ${result.kind === 'timed-out' ? 'timed out' : 'stopped'}; its process group was killed`,
      );
      const why =
        result.kind === 'timed-out'
          ? `did not finish within ${this.#config.timeoutMs} ms (servers[].executor.timeoutMs; raise it if the script is just slow)`
          : 'was stopped before it finished because porter is shutting down';
      throw new OutcomeUnknownError(
        `script "${this.#file}" ${why}; its process group was killed with ${result.killedWith}, so whether the command took effect is unknown`,
      );
    }
    if (result.code === 0) {
      this.#logger.debug({ event: 'script.done', ...log }, 'delivery script exited 0');
      return result.stdout.text();
    }
    const status = result.code === null ? `was killed by signal ${result.signal ?? 'unknown'}` : `exited with status ${result.code}`;
    const stderr = lastLines(result.stderr.text(), STDERR_LINES, STDERR_CHARS);
    this.#logger.debug({ event: 'script.failed', ...log, exitCode: result.code, signal: result.signal }, 'delivery script failed');
    throw new CommandFailedError(
      `script "${this.#file}" ${status}; ${stderr ? `last lines of its stderr:\n${stderr}` : 'it wrote nothing to stderr (make it explain failures there)'}`,
    );
  }

  /** A script has no console to query; players come from `players.exec` instead. */
  query(_command: string, _signal?: AbortSignal): Promise<string> {
    return Promise.reject(new CommandRefusedError('script executor has no console to query: read players with "players.exec" instead'));
  }

  stats(): ExecutorStats {
    return { connected: true, reconnects: 0 };
  }

  /** Stops scripts still running (their outcome becomes unknown) and waits for them. */
  async close(): Promise<void> {
    this.#stopAll.abort();
    await Promise.allSettled([...this.#running]);
  }
}
