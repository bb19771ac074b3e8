import { resolve } from 'node:path';
import { assemble } from './assemble.js';
import { errorCode, nodeFiles, type FileSeam } from './files.js';
import { Look } from './look.js';
import type { Places, Probe, ProbeContext } from './probe.js';
import { arkProbe } from './probes/ark.js';
import { arma3Probe, dayzProbe } from './probes/battleye.js';
import { conanProbe } from './probes/conan.js';
import { itzgFromEnvironment } from './probes/itzg.js';
import { minecraftProbe } from './probes/minecraft.js';
import { palworldProbe } from './probes/palworld.js';
import { rustProbe } from './probes/rust.js';
import { sevenDaysProbe } from './probes/7dtd.js';
import { sourceProbe } from './probes/source.js';
import { squadProbe } from './probes/squad.js';
import { terrariaProbe } from './probes/terraria.js';
import { zomboidProbe } from './probes/zomboid.js';
import { readProcesses } from './processes.js';
import { recognise, type KnownProgram, type ProcessHint } from './recognise.js';
import type { GameSettings } from './settings.js';
import type { Detection, DetectionReport, ProcessInfo } from './types.js';

export interface DetectOptions {
  /** The folder to search (`--game-dir`, the current directory by default). */
  readonly dir: string;
  /** The environment (itzg's RCON_PASSWORD, HOME); process.env by default. */
  readonly env?: NodeJS.ProcessEnv;
  /** The running processes; read from /proc by default. */
  readonly processes?: readonly ProcessInfo[];
  readonly fs?: FileSeam;
  /** Places searched besides `dir`; by default HOME and an itzg container's /data. */
  readonly places?: Places;
}

const PROBES: readonly Probe[] = [
  minecraftProbe,
  palworldProbe,
  arkProbe,
  rustProbe,
  sourceProbe,
  conanProbe,
  squadProbe,
  zomboidProbe,
  sevenDaysProbe,
  dayzProbe,
  arma3Probe,
  terrariaProbe,
];

/** Every game's server programs, for telling a running game server from any other process. */
export const SERVER_PROGRAMS: readonly KnownProgram[] = PROBES.flatMap((probe) =>
  probe.programs.map((program) => ({ ...program, game: probe.game })),
);

/**
 * The game servers on this machine: those running (their command lines name their folders and
 * often their RCON settings) and those whose settings are in `dir` or its usual sub-folders. Never
 * throws for anything found on disk; what could not be looked at is in `notes`.
 */
export function detectGameServers(options: DetectOptions): DetectionReport {
  const files = options.fs ?? nodeFiles;
  const env = options.env ?? process.env;
  const dir = resolve(options.dir);
  const places = options.places ?? { home: env.HOME, containerData: '/data' };
  const look = new Look(files, dir, places.home);
  const context: ProbeContext = { look, env, places };
  checkFolder(files, dir, look);
  const detections: Detection[] = [];
  for (const hint of (options.processes ?? readProcesses(files)).map((process) => recognise(process, SERVER_PROGRAMS))) {
    if (hint) detections.push(...fromProcess(hint, context));
  }
  for (const probe of PROBES) detections.push(...readAll(probe, dir, context).map((settings) => assemble(settings)));
  if (!detections.some((detection) => detection.game === 'minecraft')) {
    const fromEnvironment = itzgFromEnvironment(context);
    if (fromEnvironment) detections.push(assemble(fromEnvironment));
  }
  return { detections: rank(detections), notes: look.notes };
}

function checkFolder(files: FileSeam, dir: string, look: Look): void {
  try {
    files.readDir(dir);
  } catch (error) {
    const code = errorCode(error);
    look.note(
      dir,
      code === 'ENOENT'
        ? 'no such folder: check --game-dir'
        : code === 'ENOTDIR'
          ? 'not a folder: check --game-dir'
          : `cannot be listed (${code ?? 'unknown error'})`,
    );
  }
}

/** What each of the probe's files in `folder` says, each file once per game. */
function readAll(probe: Probe, folder: string, context: ProbeContext, hint?: ProcessHint): GameSettings[] {
  const found: GameSettings[] = [];
  for (const path of probe.candidates(folder, context, hint)) {
    if (!context.look.firstVisit(path, probe.game)) continue;
    const file = context.look.read(path);
    const settings = file && probe.read(file, context, hint);
    if (settings) found.push(settings);
  }
  return found;
}

function fromProcess(hint: ProcessHint, context: ProbeContext): Detection[] {
  const probe = PROBES.find((candidate) => candidate.game === hint.game);
  if (!probe) return [];
  const process = { pid: hint.pid, name: hint.name };
  const fromFiles = hint.dirs.flatMap((folder) => readAll(probe, folder, context, hint));
  const withArguments = (settings: GameSettings | undefined) => (probe.withCommandLine ? probe.withCommandLine(settings, hint) : settings);
  if (fromFiles.length === 0) {
    const alone = withArguments(undefined);
    if (alone) return [assemble(alone, process)];
    // Said, so that a running server missing from the list is not a mystery.
    const why =
      hint.dirs.length === 0
        ? 'its folder cannot be seen from here (run porter init as the user it runs as, or pass --game-dir)'
        : `no settings file was found in ${hint.dirs.map((folder) => context.look.shown(folder)).join(' or ')}`;
    context.look.noteAbout(`${hint.name} (pid ${hint.pid})`, `a ${hint.game} server is running, but ${why}`);
    return [];
  }
  return fromFiles.map((settings) => assemble(withArguments(settings) ?? settings, process));
}

/** Ready to use first, then running ones, then those with a password; otherwise in the order found. */
function rank(detections: readonly Detection[]): Detection[] {
  const score = (detection: Detection) =>
    (detection.problems.some((problem) => problem.severity === 'error') ? 0 : 4) +
    (detection.process ? 2 : 0) +
    (detection.password ? 1 : 0);
  return detections
    .map((detection, index) => ({ detection, index, score: score(detection) }))
    .sort((a, b) => b.score - a.score || a.index - b.index)
    .map(({ detection }) => detection);
}
