import { basename, dirname, isAbsolute, resolve } from 'node:path';
import { commandLineOptions, type CommandLineOptions } from './command-line.js';
import type { DetectedGame, ProcessInfo } from './types.js';

/** A running game server, as its command line shows it: which game, where its files are, what it was told. */
export interface ProcessHint {
  readonly game: DetectedGame;
  readonly pid: number;
  /** The program's name: `RustDedicated`, `PalServer-Linux-Shipping`, `java`. */
  readonly name: string;
  /** "the command line of RustDedicated (pid 4242)" */
  readonly source: string;
  /** Folders to look for the game's settings in, most likely first. */
  readonly dirs: readonly string[];
  readonly options: CommandLineOptions;
  /** The folder the process runs in, to resolve relative paths its options name. */
  readonly cwd: string | undefined;
}

/**
 * A path as this machine sees it. Windows servers under Wine name their files `Z:\home\…`, Wine's
 * usual mapping of the root folder; other drive letters cannot be mapped and give undefined.
 */
export function hostPath(path: string, cwd: string | undefined): string | undefined {
  if (/^[zZ]:[\\/]/.test(path)) return `/${path.slice(3).replaceAll('\\', '/')}`;
  if (/^[A-Za-z]:/.test(path)) return undefined;
  const unix = path.includes('\\') ? path.replaceAll('\\', '/') : path;
  if (isAbsolute(unix)) return unix;
  return cwd === undefined ? undefined : resolve(cwd, unix);
}

/** The program's name without folder or `.exe`, whichever separator the path uses. */
function programName(path: string): string {
  return basename(path.replaceAll('\\', '/')).replace(/\.(exe|dll)$/i, '');
}

/** The folder `levels` above the program's own, if the program path is known. */
function above(program: string | undefined, levels: number): string | undefined {
  if (program === undefined) return undefined;
  let dir = dirname(program);
  for (let i = 0; i < levels; i++) dir = dirname(dir);
  return dir;
}

/**
 * A dedicated server's program, as its game's probe names it (`Probe.programs`), from the game's
 * server documentation and the launch lines in its install guides (LinuxGSM, Pterodactyl eggs, the
 * game's wiki).
 */
export interface ServerProgram {
  /** The program's name without folder or `.exe`. */
  readonly name: RegExp;
  /** How many folders above the program's own the server's root is (Unreal: `<root>/<Game>/Binaries/<Platform>/`). */
  readonly rootAbove: number;
  /** Further conditions on the arguments. */
  readonly when?: (argv: readonly string[]) => boolean;
}

/** A program and the game whose probe named it. */
export interface KnownProgram extends ServerProgram {
  readonly game: DetectedGame;
}

/** Interpreters whose first file argument is the program that counts (`mono TerrariaServer.exe`, `wine …exe`). */
const HOSTS = /^(mono|dotnet|wine|wine64|wine64-preloader|wine-preloader|start\.exe|wineserver)$/i;

function javaGame(argv: readonly string[]): DetectedGame | undefined {
  if (argv.includes('zombie.network.GameServer')) return 'zomboid';
  const runsServer = argv.some(
    (argument) => argument === '-jar' || argument.endsWith('.jar') || /^@.*args\.txt$/.test(argument) || argument === 'nogui',
  );
  return runsServer ? 'minecraft' : undefined;
}

/**
 * Which game server a process is, if any; `undefined` for every other process. The names of the
 * games' programs come from their probes; a Java server is told by its arguments here, because
 * `java` is the program of more than one game.
 */
export function recognise(process: ProcessInfo, programs: readonly KnownProgram[]): ProcessHint | undefined {
  const [first] = process.argv;
  if (first === undefined) return undefined;
  const cwd = process.cwd;
  const firstName = programName(first);
  const programIndex = HOSTS.test(firstName) ? process.argv.findIndex((argument, index) => index > 0 && /\.(exe|dll)$/i.test(argument)) : 0;
  const programArgument = process.argv[programIndex];
  if (programArgument === undefined) return undefined;
  const name = programName(programArgument);
  const options = commandLineOptions(process.argv.slice(programIndex));
  const hint = (game: DetectedGame, dirs: readonly (string | undefined)[]): ProcessHint => ({
    game,
    pid: process.pid,
    name,
    source: `the command line of ${name} (pid ${process.pid})`,
    dirs: [...new Set(dirs.filter((dir): dir is string => dir !== undefined))],
    options,
    cwd,
  });
  if (/^java[w]?$/i.test(name)) {
    const game = javaGame(process.argv);
    return game && hint(game, [cwd]);
  }
  const known = programs.find((program) => program.name.test(name) && (program.when?.(process.argv) ?? true));
  if (!known) return undefined;
  // /proc/<pid>/exe is the interpreter under Wine or mono; the program's own path is then its argument.
  const program =
    programIndex === 0 && process.exe !== undefined && programName(process.exe) === name ? process.exe : hostPath(programArgument, cwd);
  return hint(known.game, [above(program, known.rootAbove), cwd]);
}
