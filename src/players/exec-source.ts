import type { Logger } from 'pino';
import { systemClock, type Clock } from '../clock.js';
import { PorterError } from '../errors.js';
import { scriptEnv } from '../protocols/script/env.js';
import { runProcess, SpawnFailedError } from '../protocols/script/process.js';
import { lastLines } from '../protocols/script/tail.js';

/** The players script could not give a list; the caller logs it and sends an empty one. */
export class PlayerScriptError extends PorterError {
  override readonly code = 'E_PLAYERS_SCRIPT';
}

interface ExecPlayerReaderDeps {
  readonly logger: Logger;
  /** Default 5000 ms: the list is read every few seconds, a slow script must not pile up. */
  readonly timeoutMs?: number;
  readonly clock?: Clock;
  readonly cwd?: string;
  readonly env?: NodeJS.ProcessEnv;
  /** Default 1 MiB: far beyond 4,096 identifiers, small enough to hold. */
  readonly maxOutputBytes?: number;
  readonly killGraceMs?: number;
}

/**
 * Online players from a local executable (docs/design.md#executors): run without a shell and without
 * arguments, it prints one identifier per line. Lines are trimmed and blank ones dropped;
 * normalisation (case, duplicates, the 4,096 cap) is the caller's job.
 */
export function execPlayerReader(exec: readonly string[], deps: ExecPlayerReaderDeps): (signal?: AbortSignal) => Promise<string[]> {
  const file = exec[0] ?? '';
  const timeoutMs = deps.timeoutMs ?? 5000;
  const maxOutputBytes = deps.maxOutputBytes ?? 1024 * 1024;
  const clock = deps.clock ?? systemClock;
  const logger = deps.logger.child({ players: 'exec' });

  return async (signal?: AbortSignal) => {
    let result;
    try {
      result = await runProcess({
        argv: exec,
        env: scriptEnv(deps.env ?? process.env),
        ...(deps.cwd === undefined ? {} : { cwd: deps.cwd }),
        timeoutMs,
        killGraceMs: deps.killGraceMs ?? 1000,
        stdioGraceMs: 250,
        // One byte over the cap is enough to know the output was too long.
        stdoutLimit: maxOutputBytes + 1,
        stderrLimit: 8 * 1024,
        clock,
        ...(signal === undefined ? {} : { signal }),
      });
    } catch (error) {
      if (error instanceof SpawnFailedError) {
        throw new PlayerScriptError(
          `players script was not run: ${error.message}. Check servers[].players.exec[0]: it must name an executable file`,
        );
      }
      throw error;
    }
    if (result.kind !== 'exited') {
      throw new PlayerScriptError(
        result.kind === 'timed-out'
          ? `players script "${file}" did not finish within ${timeoutMs} ms and was killed: make it print the online identifiers and exit promptly`
          : `players script "${file}" was stopped before it finished`,
      );
    }
    if (result.code !== 0) {
      const status = result.code === null ? `was killed by signal ${result.signal ?? 'unknown'}` : `exited with status ${result.code}`;
      const stderr = lastLines(result.stderr.text(), 10, 1024);
      throw new PlayerScriptError(
        `players script "${file}" ${status}: it must exit 0 after printing one identifier per line${stderr ? `; last lines of its stderr:\n${stderr}` : ''}`,
      );
    }
    if (result.stdout.dropped > 0 || result.stdout.size > maxOutputBytes) {
      throw new PlayerScriptError(
        `players script "${file}" printed more than ${maxOutputBytes} bytes: it must print only the online identifiers, one per line`,
      );
    }
    const ids = result.stdout
      .text()
      .split(/\r?\n/)
      .map((line) => line.trim())
      .filter((line) => line.length > 0);
    logger.debug({ event: 'players.read', count: ids.length, ms: result.durationMs }, 'players script read');
    return ids;
  };
}
