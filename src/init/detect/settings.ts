import type { DetectedGame, ExecutorKind, Fix, Problem } from './types.js';

/** One value and where it came from. */
export interface Fact<T> {
  readonly value: T;
  /** The setting's name as its source spells it: `rcon.port`, `RCONPort`, `+rcon.port`, `RCON_PORT`. */
  readonly setting: string;
  /** A shown file path, "the command line of … (pid …)", "environment variable …", or "default". */
  readonly source: string;
}

/** What one source (a settings file, a command line, the environment) says about a game server. */
export interface GameSettings {
  readonly game: DetectedGame;
  readonly executor: ExecutorKind;
  /** The settings file read (absolute), if any. */
  readonly file: string | undefined;
  /** RCON's switch; undefined for games that have none (it is on when a password is set). */
  readonly enabled: Fact<boolean> | undefined;
  readonly port: Fact<number>;
  /** Undefined when no password is set anywhere; an empty value when the setting is there but empty. */
  readonly password: Fact<string> | undefined;
  /** Where the server listens, when the settings bind it to one address. */
  readonly host: Fact<string> | undefined;
  /** False for games that let porter in without a password (7 Days to Die on loopback). */
  readonly passwordRequired: boolean;
  /** Problems only this game has (the shared ones are found from the facts). */
  readonly problems: readonly Problem[];
  /** The edit that switches RCON on and sets a password in `file`, when the file can take one. */
  readonly fix: Fix | undefined;
}

export const DEFAULT = 'default';

export function fact<T>(value: T, setting: string, source: string): Fact<T> {
  return { value, setting, source };
}

/** A port number as games write it: decimal digits, 1 to 65535. */
export function parsePort(raw: string): number | undefined {
  const trimmed = raw.trim();
  if (!/^[0-9]{1,5}$/.test(trimmed)) return undefined;
  const port = Number(trimmed);
  return port >= 1 && port <= 65535 ? port : undefined;
}

/** The booleans settings files use: True/False, true/false, 1/0 (any case). */
export function parseFlag(raw: string): boolean | undefined {
  const value = raw.trim().toLowerCase();
  if (value === 'true' || value === '1') return true;
  if (value === 'false' || value === '0') return false;
  return undefined;
}

/**
 * The port fact from a setting's raw text, falling back to the game's default (with a warning when
 * the text was there but not a port).
 */
export function portFrom(
  raw: string | undefined,
  setting: string,
  source: string,
  fallback: number,
): { port: Fact<number>; problems: Problem[] } {
  if (raw === undefined) return { port: fact(fallback, setting, DEFAULT), problems: [] };
  const port = parsePort(raw);
  if (port !== undefined) return { port: fact(port, setting, source), problems: [] };
  return {
    port: fact(fallback, setting, DEFAULT),
    problems: [
      {
        code: 'port-invalid',
        severity: 'warning',
        message: `${setting} in ${source} is not a port number (1-65535); porter assumes the default ${fallback}. Correct the setting.`,
      },
    ],
  };
}

/** An address a server listens on that names one host (not "any address"). */
export function bindHost(raw: string | undefined, setting: string, source: string): Fact<string> | undefined {
  const host = raw?.trim();
  if (!host || host === '0.0.0.0' || host === '::' || host === '[::]') return undefined;
  return fact(host, setting, source);
}

/** A problem for a password that is not valid text (no game would accept it either). */
export function unreadablePassword(setting: string, source: string): Problem {
  return {
    code: 'password-unreadable',
    severity: 'error',
    message: `${setting} in ${source} is not valid UTF-8 text; set a password of letters and digits.`,
  };
}
