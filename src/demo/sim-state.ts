import { UsageError } from '../errors.js';
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';

/**
 * Where a running `porter sim` (or `porter demo --keep-running`) says how to reach its purchases
 * route, so `porter sim buy` in another terminal finds it: one file per user, 0600 in a 0700
 * folder, since it holds the sim's token. `$XDG_RUNTIME_DIR/porter/sim.json` when the session has
 * a runtime folder (it is emptied at logout), else `~/.local/state/porter/sim.json`
 * (`$XDG_STATE_HOME`). `--state FILE` picks another, for two sims at once.
 */

interface SimState {
  readonly pid: number;
  readonly game: string;
  readonly storeUrl: string;
  readonly purchasesUrl: string;
  readonly token: string;
}

/** Where `porter sim` and `porter sim buy` meet without `--state`, as the help says it. */
export const DEFAULT_SIM_STATE_TEXT = '$XDG_RUNTIME_DIR/porter/sim.json, else ~/.local/state/porter/sim.json';

/**
 * The per-user state file of the running sim. Read only when a sim or a demo needs it: a user
 * with no home (systemd's DynamicUser=, HOME unset) makes os.homedir() throw, and that must never
 * stop `porter run` or `porter check` from starting.
 */
export function defaultSimStatePath(env: NodeJS.ProcessEnv = process.env): string {
  if (env.XDG_RUNTIME_DIR) return join(env.XDG_RUNTIME_DIR, 'porter', 'sim.json');
  let home = env.HOME;
  if (!home && !env.XDG_STATE_HOME) {
    try {
      home = homedir();
    } catch {
      throw new UsageError(
        "there is no home folder to keep the sim's state file in: pass --state FILE (the same on porter sim and porter sim buy)",
      );
    }
  }
  const state = env.XDG_STATE_HOME || join(home!, '.local', 'state');
  return join(state, 'porter', 'sim.json');
}

/** The state in `path`, or undefined when there is none (or it is not a sim's state). */
export function readSimState(path: string): SimState | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  try {
    const state = JSON.parse(text) as Partial<SimState>;
    const fields = [state.game, state.storeUrl, state.purchasesUrl, state.token];
    return typeof state.pid === 'number' && fields.every((f) => typeof f === 'string') ? (state as SimState) : undefined;
  } catch {
    return undefined;
  }
}

/** Whether the process that wrote the state still runs (a pid reused since is caught when the route does not answer). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Writes the state, replacing it whole, readable by this user only. */
export function writeSimState(path: string, state: SimState): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const temporary = `${path}.${process.pid}.tmp`;
  // A fresh file, so the mode applies (one left by a crash could have another).
  rmSync(temporary, { force: true });
  writeFileSync(temporary, `${JSON.stringify(state)}\n`, { mode: 0o600, flag: 'wx' });
  renameSync(temporary, path);
}

/** Removes the state when it is still this process's (another sim may have taken the file over). */
export function removeSimState(path: string): void {
  try {
    if (readSimState(path)?.pid === process.pid) rmSync(path, { force: true });
  } catch {
    // it is gone or unreadable: nothing of ours to remove
  }
}
