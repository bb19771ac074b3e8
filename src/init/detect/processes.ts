import { join } from 'node:path';
import { nodeFiles, type FileSeam } from './files.js';
import type { ProcessInfo } from './types.js';

/** A command line longer than this is no game server's; the rest is not read. */
const CMDLINE_LIMIT = 256 * 1024;

/**
 * The processes this user may look at, from /proc (proc(5)): `cmdline` holds the arguments, each
 * ended by a NUL; `cwd` and `exe` are links to the working folder and the program. Processes that
 * vanish or cannot be read (other users', kernel threads with an empty cmdline) are left out
 * without a word: there are hundreds, and none of them is a fault.
 */
export function readProcesses(files: FileSeam = nodeFiles, procRoot = '/proc'): ProcessInfo[] {
  let entries: string[];
  try {
    entries = files.readDir(procRoot);
  } catch {
    return [];
  }
  const processes: ProcessInfo[] = [];
  for (const entry of entries) {
    if (!/^[0-9]+$/.test(entry)) continue;
    const process = readProcess(files, join(procRoot, entry), Number(entry));
    if (process) processes.push(process);
  }
  return processes;
}

function readProcess(files: FileSeam, dir: string, pid: number): ProcessInfo | undefined {
  let argv: string[];
  try {
    argv = splitCmdline(files.readFile(join(dir, 'cmdline'), CMDLINE_LIMIT).bytes);
  } catch {
    return undefined;
  }
  if (argv.length === 0) return undefined;
  return { pid, argv, cwd: workingFolder(files, dir), exe: link(files, join(dir, 'exe')) };
}

/** NUL-separated arguments; a final NUL ends the last one rather than starting an empty one. */
export function splitCmdline(bytes: Buffer): string[] {
  if (bytes.length === 0) return [];
  const text = bytes.toString('utf8');
  const parts = text.split('\0');
  if (parts.at(-1) === '') parts.pop();
  return parts;
}

function link(files: FileSeam, path: string): string | undefined {
  try {
    return files.readLink(path);
  } catch {
    return undefined;
  }
}

/**
 * The working folder as a path detection can open. The link's text names it in the process's own
 * mount namespace: a server in a container says `/data`, which here may be another folder or none.
 * When the text leads to the same folder the link does, it is the clearer name; otherwise the
 * link itself (`/proc/<pid>/cwd`) still opens the right folder.
 */
function workingFolder(files: FileSeam, dir: string): string | undefined {
  const through = join(dir, 'cwd');
  const target = link(files, through);
  if (target === undefined) return undefined;
  try {
    if (files.fileId(target) === files.fileId(through)) return target;
  } catch {
    // Not reachable by its name from here: fall through to the link.
  }
  try {
    files.fileId(through);
    return through;
  } catch {
    return undefined;
  }
}
