import { join } from 'node:path';
import { makeFix } from '../fix.js';
import { findIni, parseIni, setIni, type IniFile } from '../formats/ini.js';
import type { LoadedFile } from '../look.js';
import { option, type Probe, type ProbeContext } from '../probe.js';
import { hostPath, type ProcessHint } from '../recognise.js';
import { fact, portFrom, unreadablePassword, type GameSettings } from '../settings.js';
import { decodeSettings, valueText } from '../text.js';

/**
 * Project Zomboid keeps each server's settings in `<cachedir>/Server/<servername>.ini` (cachedir
 * ~/Zomboid unless `-cachedir=` says otherwise, servername `servertest` unless `-servername`):
 * `# comment` lines and `Key=Value` lines, among them `RCONPort=27015` ("Default: 27015" in the
 * file's own comment) and `RCONPassword=`, empty until set; without it the server opens no RCON.
 * The same folder holds `<name>_SandboxVars.lua` and other files, and other games' .ini files may
 * sit beside it, so a file counts only with Zomboid's keys and no [section].
 */
const DEFAULT_PORT = 27015;
const SYNTAX = { comments: ['#'] };
const ZOMBOID_KEYS = ['DefaultPort', 'PauseEmpty', 'PVP', 'Map', 'Mods', 'PublicName', 'MaxPlayers'];

function isZomboidIni(ini: IniFile): boolean {
  const has = (key: string) => findIni(ini, undefined, key, 'last') !== undefined;
  return ini.sections.size === 0 && (has('RCONPort') || has('RCONPassword')) && ZOMBOID_KEYS.some(has);
}

function read(file: LoadedFile): GameSettings | undefined {
  const settings = decodeSettings(file.bytes);
  const ini = parseIni(settings.text, SYNTAX);
  if (!isZomboidIni(ini)) return undefined;
  const source = file.shown;
  const { port, problems } = portFrom(findIni(ini, undefined, 'RCONPort', 'last')?.value, 'RCONPort', source, DEFAULT_PORT);
  const passwordEntry = findIni(ini, undefined, 'RCONPassword', 'last');
  const password = passwordEntry && valueText(settings, passwordEntry.value);
  if (passwordEntry && password === undefined) problems.push(unreadablePassword('RCONPassword', source));
  return {
    game: 'zomboid',
    executor: 'rcon',
    file: file.path,
    enabled: undefined,
    port,
    password: password === undefined ? undefined : fact(password, 'RCONPassword', source),
    host: undefined,
    passwordRequired: true,
    problems,
    fix: password
      ? undefined
      : makeFix({
          file: file.path,
          shownFile: source,
          summary: `set a new RCONPassword in ${source}`,
          setsPassword: true,
          steps: [
            (text, newPassword) => {
              const now = parseIni(text, SYNTAX);
              return findIni(now, undefined, 'RCONPassword', 'last')?.value
                ? undefined
                : setIni(text, now, undefined, 'RCONPassword', newPassword, 'last');
            },
          ],
        }),
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

export const zomboidProbe: Probe = { game: 'zomboid', candidates, read };
