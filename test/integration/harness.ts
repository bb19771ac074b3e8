import assert from 'node:assert/strict';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startRconServer, type FakeRconServer, type RconServerOptions } from '../../src/sim/faults/rcon-server.js';
import { SIM_SERVER_ID, SIM_TOKEN, startSellerApi, type FakeSellerApi, type SellerApiOptions } from '../../src/sim/faults/seller-api.js';
import { waitFor } from '../helpers/wait-for.js';

/**
 * The integration test bed: both simulators on 127.0.0.1, a config file in a temp folder, and the REAL
 * CLI (`node dist/src/cli/main.js run -c FILE`) spawned with an argv array, never a shell. Every
 * process it spawns is killed in `close()`, so a failing test cannot leave one behind.
 */

/**
 * The CLI under test: package.json's `bin` (the bundle `npm run build` makes, what users run) when
 * it is at least as new as tsc's output, else tsc's dist/src/cli/main.js, so a `npx tsc -p .`
 * before the tests never runs them against a stale bundle. PORTER_IT_CLI overrides both.
 */
export const CLI = pickCli();

function pickCli(): string {
  if (process.env.PORTER_IT_CLI) return resolve(process.env.PORTER_IT_CLI);
  // dist/test/integration/harness.js → the repository root
  const root = fileURLToPath(new URL('../../../', import.meta.url));
  const compiled = join(root, 'dist', 'src', 'cli', 'main.js');
  const { bin } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { bin?: string | Record<string, string> };
  const declared = typeof bin === 'string' ? bin : bin?.porter;
  if (declared === undefined) return compiled;
  const bundle = join(root, declared);
  const fresh = existsSync(bundle) && (!existsSync(compiled) || statSync(bundle).mtimeMs >= statSync(compiled).mtimeMs);
  return fresh ? bundle : compiled;
}

export const RCON_PASSWORD = 'rcon-pw-Q7v9xZ2k4m';
export { SIM_SERVER_ID, SIM_TOKEN };

/** Generous: a loaded 2-core CI machine runs two of these files at once. */
export const WAIT = { timeoutMs: 30_000, intervalMs: 20 } as const;

/** A promise the test resolves when it chooses: a simulator holds an answer until then. */
export function gate(): { readonly promise: Promise<void>; readonly open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

/** `event` is the stable name to find a line by (docs/operations.md#log-events); `msg` is for people. */
export type LogLine = Record<string, unknown> & { level?: string; event?: string; msg?: string };

export interface Exit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

export class PorterProcess {
  readonly child: ChildProcessWithoutNullStreams;
  readonly startedAt = Date.now();
  stdout = '';
  stderr = '';
  /** Every stdout line that parsed as JSON (pino's log lines). */
  readonly lines: LogLine[] = [];
  readonly exited: Promise<Exit>;
  #exit: Exit | undefined;
  #partial = '';

  /**
   * `prlimit`: run node under `prlimit --nofile=SOFT:HARD --` (it execs node, so the pid is porter's).
   * `prefix`: a command node runs under (`unshare … --`); the pid is then the prefix's.
   */
  constructor(args: readonly string[], env: NodeJS.ProcessEnv, prlimit?: string, prefix: readonly string[] = []) {
    const [command, argv] = prlimit
      ? ['prlimit', [`--nofile=${prlimit}`, '--', process.execPath, CLI, ...args]]
      : [process.execPath, [CLI, ...args]];
    const [program, programArgs] = prefix.length > 0 ? [prefix[0]!, [...prefix.slice(1), command, ...argv]] : [command, argv];
    this.child = spawn(program, programArgs, { env, stdio: ['pipe', 'pipe', 'pipe'] });
    this.child.stdin.end();
    this.child.stdout.setEncoding('utf8').on('data', (chunk: string) => this.#onStdout(chunk));
    this.child.stderr.setEncoding('utf8').on('data', (chunk: string) => (this.stderr += chunk));
    this.exited = new Promise((resolve, reject) => {
      this.child.once('error', reject);
      // 'close' rather than 'exit': by then every byte of stdout and stderr has been read.
      this.child.once('close', (code, signal) => {
        this.#exit = { code, signal };
        resolve(this.#exit);
      });
    });
  }

  #onStdout(chunk: string): void {
    this.stdout += chunk;
    const parts = (this.#partial + chunk).split('\n');
    this.#partial = parts.pop() ?? '';
    for (const part of parts) {
      try {
        this.lines.push(JSON.parse(part) as LogLine);
      } catch {
        // not a log line (the daemon writes nothing else, but a test must not die on it)
      }
    }
  }

  get pid(): number {
    return this.child.pid!;
  }

  /** Undefined while running. */
  get exit(): Exit | undefined {
    return this.#exit;
  }

  get output(): string {
    return `${this.stdout}\n${this.stderr}`;
  }

  /**
   * Log lines of this event (docs/operations.md#log-events), and of those only the ones `where`
   * accepts: the event, not the wording, finds a line, as an operator's alert would.
   */
  events(name: string, where: (line: LogLine) => boolean = () => true): LogLine[] {
    return this.lines.filter((line) => line.event === name && where(line));
  }

  waitForEvent(name: string, where?: (line: LogLine) => boolean, what = `a log line with event ${name}`): Promise<LogLine> {
    return waitFor(
      () =>
        this.events(name, where)[0] ??
        (this.#exit ? fail(`porter exited (${JSON.stringify(this.#exit)}) before ${what}\n${this.tail()}`) : undefined),
      {
        ...WAIT,
        what,
      },
    );
  }

  kill(signal: NodeJS.Signals): void {
    if (this.#exit === undefined) this.child.kill(signal);
  }

  /**
   * SIGSTOP, as a paused VM or container would (docs/design.md#frozen-and-thawed); resolves once
   * the kernel shows the process stopped (Linux's /proc; elsewhere at once).
   */
  async freeze(): Promise<void> {
    this.kill('SIGSTOP');
    const stat = `/proc/${this.pid}/stat`;
    if (!existsSync(stat)) return;
    // The state is the field after the command name, which is in parentheses and may hold spaces.
    await waitFor(() => /\) T /.test(readFileSync(stat, 'utf8')) || this.#exit, { ...WAIT, intervalMs: 1, what: 'porter to stop' });
  }

  thaw(): void {
    this.kill('SIGCONT');
  }

  /** Waits for the exit, SIGKILLing the process when it overstays `timeoutMs`. */
  async waitExit(timeoutMs: number = WAIT.timeoutMs): Promise<Exit> {
    let timer: NodeJS.Timeout | undefined;
    const overstay = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        this.kill('SIGKILL');
        reject(new Error(`porter (pid ${this.pid}) did not exit within ${timeoutMs} ms; killed it\n${this.tail()}`));
      }, timeoutMs);
    });
    try {
      return await Promise.race([this.exited, overstay]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** The last lines of output, for failure messages. */
  tail(lines = 25): string {
    return `--- stdout (tail) ---\n${this.stdout.split('\n').slice(-lines).join('\n')}\n--- stderr ---\n${this.stderr.slice(-4000)}`;
  }
}

function fail(message: string): never {
  throw new Error(message);
}

export interface BedOptions {
  readonly api?: SellerApiOptions;
  readonly rcon?: Partial<RconServerOptions>;
}

/** Porter's config for the bed's simulators; `edit` changes it before it is written. */
export type ConfigEdit = (config: PorterConfig) => void;

export interface PorterConfig {
  api: Record<string, unknown> & { budget?: Record<string, number> };
  servers: Array<Record<string, unknown> & { id: string; executor: Record<string, unknown>; players?: Record<string, unknown> }>;
  poll: { idleMs: number };
  stateDir: string;
  log: { level: string; pretty?: boolean };
  shutdown: { drainMs: number };
}

export class TestBed {
  readonly dir = mkdtempSync(join(tmpdir(), 'porter-integration-'));
  readonly configPath = join(this.dir, 'config.json');
  readonly processes: PorterProcess[] = [];

  constructor(
    readonly api: FakeSellerApi,
    readonly rcon: FakeRconServer,
  ) {}

  baseConfig(): PorterConfig {
    return {
      // Deadlines far beyond what a loaded machine needs: no test here is about them.
      api: { baseUrl: this.api.url, token: SIM_TOKEN, timeoutMs: 30_000 },
      servers: [
        {
          id: SIM_SERVER_ID,
          name: 'itest',
          executor: {
            type: 'rcon',
            host: this.rcon.host,
            port: this.rcon.port,
            password: RCON_PASSWORD,
            timeoutMs: 30_000,
            connectTimeoutMs: 15_000,
          },
          players: { preset: 'minecraft', refreshMs: 200 },
        },
      ],
      poll: { idleMs: 200 },
      stateDir: './state',
      log: { level: 'info', pretty: false },
      shutdown: { drainMs: 10_000 },
    };
  }

  writeConfig(edit?: ConfigEdit): string {
    const config = this.baseConfig();
    edit?.(config);
    writeFileSync(this.configPath, JSON.stringify(config, null, 2), { mode: 0o600 });
    return this.configPath;
  }

  /** Spawns `porter run -c <config>`; env has no PORTER_* of the test runner unless given. */
  spawnPorter(
    options: { env?: Record<string, string>; args?: readonly string[]; prlimit?: string; prefix?: readonly string[] } = {},
  ): PorterProcess {
    const env: NodeJS.ProcessEnv = {};
    for (const [key, value] of Object.entries(process.env)) if (!key.startsWith('PORTER_') && key !== 'NODE_TEST_CONTEXT') env[key] = value;
    Object.assign(env, options.env);
    const porter = new PorterProcess(options.args ?? ['run', '-c', this.configPath], env, options.prlimit, options.prefix);
    this.processes.push(porter);
    return porter;
  }

  /** Commands the game server ran, read-only listings left out. */
  ran(): string[] {
    return this.rcon.executed.filter((e) => !e.query).map((e) => e.command);
  }

  /** How many times the game server ran exactly this command text. */
  ranCount(command: string): number {
    return this.ran().filter((c) => c === command).length;
  }

  async close(): Promise<void> {
    for (const porter of this.processes) porter.kill('SIGKILL');
    await Promise.allSettled(this.processes.map((p) => p.exited));
    await Promise.allSettled([this.api.close(), this.rcon.close()]);
    rmSync(this.dir, { recursive: true, force: true });
  }
}

export async function startBed(options: BedOptions = {}): Promise<TestBed> {
  const api = await startSellerApi(options.api);
  try {
    const rcon = await startRconServer({ password: RCON_PASSWORD, flavour: 'minecraft', players: ['Steve'], ...options.rcon });
    return new TestBed(api, rcon);
  } catch (error) {
    await api.close();
    throw error;
  }
}

/** Accepted (200) reports of a command, from the fake's history. */
export function acceptedReports(command: { reports: ReadonlyArray<{ status: number }> }): number {
  return command.reports.filter((r) => r.status === 200).length;
}

export const isSettled = (status: string) => status === 'EXECUTED' || status === 'FAILED';

/**
 * Runs porter until a `give` fails with the game's `answer` (which echoes something secret), stops
 * it (exit 0), and gives the reason the store got.
 */
export async function failedWithAnswer(bed: TestBed, answer: string): Promise<{ reason: string; porter: PorterProcess }> {
  bed.rcon.setHandler((command) => (command.startsWith('give ') ? answer : undefined));
  const id = bed.api.enqueue(SIM_SERVER_ID, { command: 'give Steve diamond 1' });
  const porter = bed.spawnPorter();
  await waitFor(() => bed.api.commands().find((c) => c.id === id)?.status === 'FAILED' || porter.exit, {
    ...WAIT,
    what: 'the failed delivery',
  });
  porter.kill('SIGTERM');
  assert.deepEqual(await porter.waitExit(), { code: 0, signal: null }, porter.tail());
  return { reason: bed.api.commands().find((c) => c.id === id)?.error ?? '', porter };
}
