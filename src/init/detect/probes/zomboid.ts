import { join } from 'node:path';
import { gameConsole } from '../../game-transport.js';
import { findIni, parseIni, type IniFile } from '../formats/ini.js';
import type { LoadedFile } from '../look.js';
import { bareSettings, option, type Probe, type ProbeContext } from '../probe.js';
import { hostPath, type ProcessHint } from '../recognise.js';
import { portFrom, type GameSettings } from '../settings.js';
import { decodeSettings } from '../text.js';
import { fixMissing, newIniPassword, passwordIn } from '../password-fix.js';

/**
 * Project Zomboid keeps each server's settings in `<cachedir>/Server/<servername>.ini` (cachedir
 * ~/Zomboid unless `-cachedir=` says otherwise, servername `servertest` unless `-servername`):
 * `# comment` lines and `Key=Value` lines, among them `RCONPort=27015` ("Default: 27015" in the
 * file's own comment) and `RCONPassword=`, empty until set; without it the server opens no RCON.
 * The same folder holds `<name>_SandboxVars.lua` and other files, and other games' .ini files may
 * sit beside it, so a file counts only with Zomboid's keys and no [section].
 */
const DEFAULT_PORT = gameConsole('zomboid').port;
const PLACE = { syntax: { comments: ['#'] }, section: undefined, pick: 'last' } as const;
const ZOMBOID_KEYS = ['DefaultPort', 'PauseEmpty', 'PVP', 'Map', 'Mods', 'PublicName', 'MaxPlayers'];

function isZomboidIni(ini: IniFile): boolean {
  const has = (key: string) => findIni(ini, undefined, key, 'last') !== undefined;
  return ini.sections.size === 0 && (has('RCONPort') || has('RCONPassword')) && ZOMBOID_KEYS.some(has);
}

function read(file: LoadedFile): GameSettings | undefined {
  const settings = decodeSettings(file.bytes);
  const ini = parseIni(settings.text, PLACE.syntax);
  if (!isZomboidIni(ini)) return undefined;
  const source = file.shown;
  const { port, problems } = portFrom(findIni(ini, undefined, 'RCONPort', 'last')?.value, 'RCONPort', source, DEFAULT_PORT);
  const password = passwordIn(settings, findIni(ini, undefined, 'RCONPassword', 'last')?.value, 'RCONPassword', source, problems);
  return {
    ...bareSettings('zomboid', port),
    file: file.path,
    password,
    problems,
    fix: fixMissing(file, { password: !password?.value && 'RCONPassword' }, [newIniPassword(PLACE, 'RCONPassword')]),
  };
}

/** The server folders to look in: the one a running server names, else every usual one. */
function serverFolders(dir: string, context: ProbeContext, hint: ProcessHint | undefined): string[] {
  const cacheOption = hint && option(hint, 'cachedir');
  const cacheDir = cacheOption && hostPath(cacheOption.value, hint.cwd);
  if (cacheDir) return [join(cacheDir, 'Server')];
  const home = context.places.home;
  return [join(dir, 'Zomboid', 'Server'), join(dir, 'Server'), dir, ...(home ? [join(home, 'Zomboid', 'Server')] : [])];
}

function candidates(dir: string, context: ProbeContext, hint?: ProcessHint): string[] {
  // A running server without -servername is the default one.
  const serverName = hint ? (option(hint, 'servername')?.value ?? 'servertest') : undefined;
  return serverFolders(dir, context, hint).flatMap((folder) =>
    serverName !== undefined ? [join(folder, `${serverName}.ini`)] : context.look.matching(folder, /\.ini$/i),
  );
}

export const zomboidProbe: Probe = { game: 'zomboid', programs: [{ name: /^ProjectZomboid(32|64)$/i, rootAbove: 0 }], candidates, read };
