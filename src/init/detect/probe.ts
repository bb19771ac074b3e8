import { gameConsole } from '../game-transport.js';
import type { CommandLineOption } from './command-line.js';
import type { LoadedFile, Look } from './look.js';
import type { ProcessHint, ServerProgram } from './recognise.js';
import { fact, parseFlag, parsePort, type Fact, type GameSettings } from './settings.js';
import type { DetectedGame, ExecutorKind, Problem } from './types.js';

/** Where detection looks besides the folder it is given. */
export interface Places {
  /** The user's home folder (Project Zomboid keeps its servers in ~/Zomboid/Server). */
  readonly home?: string | undefined;
  /** The data folder of an itzg/minecraft-server container, when porter runs inside one (/data). */
  readonly containerData?: string | undefined;
}

export interface ProbeContext {
  readonly look: Look;
  readonly env: NodeJS.ProcessEnv;
  readonly places: Places;
}

/** What detection knows of one game: where its settings live and what they say. */
export interface Probe {
  readonly game: DetectedGame;
  /** The names its dedicated server runs under, to find a running one (none for a Java server: recognise.ts tells those by their arguments). */
  readonly programs: readonly ServerProgram[];
  /** The settings files to try for a server kept in `dir` (they need not exist), most likely first. */
  candidates(dir: string, context: ProbeContext, hint?: ProcessHint): string[];
  /** What one of those files says; undefined when it is not this game's file after all. */
  read(file: LoadedFile, context: ProbeContext, hint?: ProcessHint): GameSettings | undefined;
  /**
   * For servers that take RCON settings as arguments: the command line's values laid over the
   * file's, or alone when no file was found (undefined when they say nothing either).
   */
  withCommandLine?(settings: GameSettings | undefined, hint: ProcessHint): GameSettings | undefined;
}

/** The facts a command line (or environment) gives, laid over what a file said. */
export interface Overrides {
  readonly enabled?: Fact<boolean> | undefined;
  readonly port?: Fact<number> | undefined;
  readonly password?: Fact<string> | undefined;
  readonly host?: Fact<string> | undefined;
  readonly problems?: readonly Problem[];
}

export function overlay(base: GameSettings, overrides: Overrides): GameSettings {
  return {
    ...base,
    enabled: overrides.enabled ?? base.enabled,
    port: overrides.port ?? base.port,
    password: overrides.password ?? base.password,
    host: overrides.host ?? base.host,
    problems: [...base.problems, ...(overrides.problems ?? [])],
  };
}

/** Whether the overrides say anything at all. */
function saysAnything(overrides: Overrides): boolean {
  return (
    overrides.enabled !== undefined || overrides.port !== undefined || overrides.password !== undefined || overrides.host !== undefined
  );
}

/** The value of the first of `names` the command line gives. */
export function option(hint: ProcessHint, ...names: string[]): CommandLineOption | undefined {
  for (const name of names) {
    const found = hint.options.get(name.toLowerCase());
    if (found) return found;
  }
  return undefined;
}

/** Command-line facts from named options (an invalid port or flag is ignored: the server would not take it either). */
export function commandLineFacts(
  hint: ProcessHint,
  names: { readonly enabled?: readonly string[]; readonly port?: readonly string[]; readonly password?: readonly string[] },
): Overrides {
  const enabledOption = names.enabled && option(hint, ...names.enabled);
  const portOption = names.port && option(hint, ...names.port);
  const passwordOption = names.password && option(hint, ...names.password);
  const enabled = enabledOption && parseFlag(enabledOption.value);
  const port = portOption && parsePort(portOption.value);
  return {
    enabled: enabledOption && enabled !== undefined ? fact(enabled, enabledOption.shown, hint.source) : undefined,
    port: portOption && port !== undefined ? fact(port, portOption.shown, hint.source) : undefined,
    password: passwordOption ? fact(passwordOption.value, passwordOption.shown, hint.source) : undefined,
  };
}

/** Settings known only from a command line: the game's defaults, no file; its console's transport unless `executor` says otherwise. */
export function bareSettings(game: DetectedGame, port: Fact<number>, enabled?: Fact<boolean>, executor?: ExecutorKind): GameSettings {
  return {
    game,
    executor: executor ?? gameConsole(game).type,
    file: undefined,
    enabled,
    port,
    password: undefined,
    host: undefined,
    passwordRequired: true,
    problems: [],
    fix: undefined,
  };
}

/** The command line over the file's settings, or over `bare()` when no file was found but the command line says something. */
export function laidOver(settings: GameSettings | undefined, overrides: Overrides, bare: () => GameSettings): GameSettings | undefined {
  if (settings) return overlay(settings, overrides);
  return saysAnything(overrides) ? overlay(bare(), overrides) : undefined;
}
