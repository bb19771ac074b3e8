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

interface Known {
  readonly game: DetectedGame;
  /** How many folders above the program's own the server's root is (Unreal: `<root>/<Game>/Binaries/<Platform>/`). */
  readonly rootAbove: number;
  /** Further conditions on the arguments. */
  readonly when?: (argv: readonly string[]) => boolean;
}

/**
 * Program names of dedicated servers, from the games' server documentation and the launch lines in
 * their install guides (LinuxGSM, Pterodactyl eggs, the games' wikis).
 */
const PROGRAMS: readonly (readonly [RegExp, Known])[] = [
  [/^RustDedicated$/i, { game: 'rust', rootAbove: 0 }],
  [/^PalServer(-Linux-(Shipping|Test)|-Win64-(Shipping|Test)(-Cmd)?)$/i, { game: 'palworld', rootAbove: 3 }],
  [/^PalServer$/i, { game: 'palworld', rootAbove: 0 }],
  [/^(ShooterGameServer|ArkAscendedServer)$/i, { game: 'ark', rootAbove: 3 }],
  [/^srcds(_linux|_linux64|_run|_x64)?$/i, { game: 'source', rootAbove: 0 }],
  [/^cs2$/i, { game: 'source', rootAbove: 3, when: (argv) => argv.includes('-dedicated') }],
  [/^7DaysToDieServer(\.x86_64)?$/i, { game: '7dtd', rootAbove: 0 }],
  [/^DayZServer(_x64)?$/i, { game: 'dayz', rootAbove: 0 }],
  [/^arma3server(_x64|_x86_64)?$/i, { game: 'arma3', rootAbove: 0 }],
  [/^ProjectZomboid(32|64)$/i, { game: 'zomboid', rootAbove: 0 }],
  [/^SquadGameServer$/i, { game: 'squad', rootAbove: 3 }],
  [/^ConanSandboxServer(-Win64-Shipping)?$/i, { game: 'conan', rootAbove: 3 }],
  [/^(TShock\.Server|TShock\.Installer|TerrariaServer)$/i, { game: 'terraria', rootAbove: 0 }],
];

/** Interpreters whose first file argument is the program that counts (`mono TerrariaServer.exe`, `wine …exe`). */
const HOSTS = /^(mono|dotnet|wine|wine64|wine64-preloader|wine-preloader|start\.exe|wineserver)$/i;

function javaGame(argv: readonly string[]): DetectedGame | undefined {
  if (argv.includes('zombie.network.GameServer')) return 'zomboid';
  const runsServer = argv.some(
    (argument) => argument === '-jar' || argument.endsWith('.jar') || /^@.*args\.txt$/.test(argument) || argument === 'nogui',
  );
  return runsServer ? 'minecraft' : undefined;
}

/** Which game server a process is, if any; `undefined` for every other process. */
export function recognise(process: ProcessInfo): ProcessHint | undefined {
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
  const known = PROGRAMS.find(([pattern, entry]) => pattern.test(name) && (entry.when?.(process.argv) ?? true))?.[1];
  if (!known) return undefined;
  // /proc/<pid>/exe is the interpreter under Wine or mono; the program's own path is then its argument.
  const program =
    programIndex === 0 && process.exe !== undefined && programName(process.exe) === name ? process.exe : hostPath(programArgument, cwd);
  return hint(known.game, [above(program, known.rootAbove), cwd]);
}
