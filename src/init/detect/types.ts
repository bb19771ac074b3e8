import type { ConsoleTransportType } from '../../protocols/transport-registry.js';
import type { InitGame } from '../game-transport.js';
import type { Secret } from './secret.js';

/** The games detection may find, by the name porter's `players.preset` gives them: those init knows (a probe in probes/ per game). */
export type DetectedGame = InitGame;

/** How porter would talk to the server: the executor type of its config, one with a console. */
export type ExecutorKind = ConsoleTransportType;

/** One line of what was found, to show the user: "rcon.port 25575, from ./server.properties". */
export interface FoundSetting {
  /** The setting's name as the game spells it. */
  readonly setting: string;
  /** Its value as shown; a password is shown as "set (12 characters)", never itself. */
  readonly shown: string;
  /** Where it came from: a file, a process's command line, an environment variable, or "default". */
  readonly source: string;
}

/**
 * A pure edit that makes a settings file usable for porter: switches RCON (or telnet, or the REST
 * API) on and sets a password where there is none. Applying it, and restarting the game server,
 * is up to the caller.
 */
export interface Fix {
  /** The file to rewrite (absolute; it may not exist yet when the fix creates it). */
  readonly file: string;
  /** The file as shown to the user. */
  readonly shownFile: string;
  /** What the edit does, for a yes/no question; never contains a password. */
  readonly summary: string;
  /** Whether `apply` writes the password it is given (otherwise the file keeps its own). */
  readonly setsPassword: boolean;
  /**
   * The file's new bytes, from its current bytes (read them again just before): only the values
   * that change are touched, every other byte stays as it was. `password` must be letters and
   * digits only (see generatePassword).
   */
  apply(current: Uint8Array, password: string): Buffer;
}

export interface Problem {
  /** Stable, for tests and for the caller's decisions: 'rcon-disabled', 'password-empty', … */
  readonly code: string;
  /** 'error': porter cannot log in as things are; 'warning': it can, but something will bite. */
  readonly severity: 'error' | 'warning';
  /** What is wrong and what to do, without any secret. */
  readonly message: string;
  readonly fix?: Fix | undefined;
}

export interface DetectedExecutor {
  readonly type: ExecutorKind;
  readonly host: string;
  readonly port: number;
}

/** One game server found on this machine, with what porter needs to reach it. */
export interface Detection {
  readonly game: DetectedGame;
  readonly executor: DetectedExecutor;
  /** Kept apart from everything printable: JSON.stringify, util.inspect and template strings show "[hidden]". */
  readonly password: Secret | undefined;
  readonly found: readonly FoundSetting[];
  readonly problems: readonly Problem[];
  /** The settings file the values came from, if any (absolute). */
  readonly settingsFile: string | undefined;
  /** The running server process the values came from, if any. */
  readonly process: { readonly pid: number; readonly name: string } | undefined;
}

/** Something detection could not look at, said once so the user knows why a server may be missing. */
export interface Note {
  readonly path: string;
  readonly message: string;
}

export interface DetectionReport {
  /** Best first: ready to use, then running, then with a password. */
  readonly detections: readonly Detection[];
  readonly notes: readonly Note[];
}

/** A running process as /proc shows it. */
export interface ProcessInfo {
  readonly pid: number;
  /** The command line, one entry per argument. */
  readonly argv: readonly string[];
  /** Its working directory, as a path this process can open (see processes.ts). */
  readonly cwd?: string | undefined;
  /** The program file, when /proc/<pid>/exe is readable. */
  readonly exe?: string | undefined;
}
