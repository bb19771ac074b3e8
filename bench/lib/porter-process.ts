import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cpuMs, cpuTimes, peakRssKb, rssKb } from './proc.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/**
 * What `porter` runs once installed: package.json's `bin.porter`, resolved in the project, so the
 * figures follow however the project ships the CLI (compiled modules or a bundle).
 */
const PORTER_MAIN = resolve(ROOT, (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { bin: { porter: string } }).bin.porter);

/**
 * The node flags the bin's `#!/usr/bin/env -S node …` line asks for: an installed `porter` runs
 * with them, so the figures must too. The harness puts them on its own node's command line, as
 * env would.
 */
export const PORTER_NODE_FLAGS = shebangFlags(PORTER_MAIN);

function shebangFlags(main: string): string[] {
  const line = readFileSync(main, 'utf8').split('\n', 1)[0] ?? '';
  const match = /^#!\s*\S*env\s+(?:-S\s+)?node((?:\s+--[\w-]+(?:=\S+)?)*)\s*$/.exec(line);
  if (!match) throw new Error(`${main} should start with "#!/usr/bin/env [-S] node [--flag…]", not ${JSON.stringify(line)}`);
  return match[1]!.trim().split(/\s+/).filter(Boolean);
}

/** A build of porter a benchmark runs: this tree's, or another commit's (`npm run bench -- --against REF`). */
export interface PorterBuild {
  /** How the tables name it: `this tree`, or the other ref and its commit. */
  readonly label: string;
  /** Its bin's file. */
  readonly main: string;
  /** Its bin's node flags: each build runs as its own installed `porter` would. */
  readonly nodeFlags: readonly string[];
}

export const THIS_BUILD: PorterBuild = { label: 'this tree', main: PORTER_MAIN, nodeFlags: PORTER_NODE_FLAGS };

/** Another build, from its bin's file (its node flags read from its own first line). */
export function porterBuild(label: string, main: string): PorterBuild {
  return { label, main, nodeFlags: shebangFlags(main) };
}

export interface PorterProcess {
  readonly pid: number;
  /** Date.now() just before the spawn. */
  readonly spawnedAt: number;
  /** Where stdout (the JSON log lines) and stderr go. */
  readonly logPath: string;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  cpuMs(): number;
  cpuTimes(): { user: number; system: number };
  rssKb(): number;
  /** VmHWM: the most it held resident since its start. */
  peakRssKb(): number;
  /** SIGTERM, then SIGKILL if it has not exited within `graceMs`. Returns the exit code. */
  stop(graceMs?: number): Promise<number | null>;
  /** The last lines porter wrote, for error messages. */
  tail(lines?: number): string;
}

interface StartOptions {
  /** Write a V8 CPU profile (.cpuprofile) into the fixture's folder when porter exits. */
  readonly profile?: boolean;
  /** More node flags for porter (e.g. --trace-gc, whose lines land in porter.log). */
  readonly nodeArgs?: readonly string[];
  /** Another build of porter to run (an A/B comparison, `--against`); this tree's by default. */
  readonly build?: PorterBuild;
}

/**
 * Starts `porter run -c <config>` as its own process. stdout and stderr go to a file rather than
 * a pipe: pino writes synchronously, and a pipe the harness drains late would make porter wait,
 * which would be the harness's cost charged to porter.
 */
export function startPorter(configPath: string, dir: string, options: StartOptions = {}): PorterProcess {
  const logPath = join(dir, 'porter.log');
  const out = openSync(logPath, 'a');
  const spawnedAt = Date.now();
  let child: ChildProcess;
  try {
    const nodeArgs = [...(options.profile ? ['--cpu-prof', '--cpu-prof-dir', dir] : []), ...(options.nodeArgs ?? [])];
    const build = options.build ?? THIS_BUILD;
    child = spawn(process.execPath, [...build.nodeFlags, ...nodeArgs, build.main, 'run', '-c', configPath], {
      cwd: dir,
      stdio: ['ignore', out, out],
    });
  } finally {
    closeSync(out);
  }
  const pid = child.pid;
  if (pid === undefined) throw new Error(`could not start porter (${PORTER_MAIN}): run "npm run bench", which builds it first`);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
  });
  let done = false;
  void exited.then(() => {
    done = true;
  });
  const tail = (lines = 20) => {
    try {
      return readFileSync(logPath, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
    } catch {
      return '(no log)';
    }
  };
  return {
    pid,
    spawnedAt,
    logPath,
    exited,
    cpuMs: () => cpuMs(pid),
    cpuTimes: () => cpuTimes(pid),
    rssKb: () => rssKb(pid),
    peakRssKb: () => peakRssKb(pid),
    tail,
    async stop(graceMs = 15_000) {
      if (!done) child.kill('SIGTERM');
      const timer = setTimeout(() => {
        if (!done) child.kill('SIGKILL');
      }, graceMs);
      try {
        return (await exited).code;
      } finally {
        clearTimeout(timer);
      }
    },
  };
}

/** Wall time of a process from spawn to exit, in ms (hrtime, so sub-ms). */
export function timeProcess(args: readonly string[]): Promise<number> {
  return new Promise((resolve, reject) => {
    const start = process.hrtime.bigint();
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'inherit'] });
    child.once('error', reject);
    child.once('exit', (code) => {
      const ms = Number(process.hrtime.bigint() - start) / 1e6;
      if (code === 0) resolve(ms);
      else reject(new Error(`${args.join(' ')} exited with ${code}`));
    });
  });
}
