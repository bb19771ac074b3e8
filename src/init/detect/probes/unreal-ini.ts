import { makeFix } from '../fix.js';
import { findIni, parseIni, setIni, type IniFile } from '../formats/ini.js';
import type { LoadedFile } from '../look.js';
import { DEFAULT, fact, parseFlag, portFrom, unreadablePassword, type GameSettings } from '../settings.js';
import { decodeSettings, valueText } from '../text.js';
import type { DetectedGame } from '../types.js';

/**
 * The RCON keys of a game whose settings are an Unreal Engine ini section (ARK's
 * `[ServerSettings]`, Conan's `[RconPlugin]`): Unreal reads the first of two equal keys.
 */
export interface UnrealRcon {
  readonly game: DetectedGame;
  readonly section: string;
  readonly enabledKey: string;
  /** How the game writes "on" (ARK: True, Conan: 1). */
  readonly on: string;
  readonly portKey: string;
  readonly defaultPort: number;
  readonly passwordKey: string;
}

const SYNTAX = { comments: [';', '#'] };

/** What the file says; its path is the game's own, so a file without the section is the game's with RCON off. */
export function readUnrealRcon(file: LoadedFile, keys: UnrealRcon): GameSettings {
  const settings = decodeSettings(file.bytes);
  const ini = parseIni(settings.text, SYNTAX);
  const source = file.shown;
  const get = (key: string) => findIni(ini, keys.section, key, 'first');
  const enabledEntry = get(keys.enabledKey);
  const enabled = enabledEntry && parseFlag(enabledEntry.value);
  const { port, problems } = portFrom(get(keys.portKey)?.value, keys.portKey, source, keys.defaultPort);
  const passwordEntry = get(keys.passwordKey);
  const password = passwordEntry && valueText(settings, passwordEntry.value);
  if (passwordEntry && password === undefined) problems.push(unreadablePassword(keys.passwordKey, source));
  const on = enabled === true;
  const setIfNot =
    (key: string, wanted: (value: string) => boolean, value: (password: string) => string) => (text: string, newPassword: string) => {
      const now: IniFile = parseIni(text, SYNTAX);
      const entry = findIni(now, keys.section, key, 'first');
      return entry && wanted(entry.value) ? undefined : setIni(text, now, keys.section, key, value(newPassword), 'first');
    };
  return {
    game: keys.game,
    executor: 'rcon',
    file: file.path,
    enabled: fact(on, keys.enabledKey, enabledEntry && enabled !== undefined ? source : DEFAULT),
    port,
    password: password === undefined ? undefined : fact(password, keys.passwordKey, source),
    host: undefined,
    passwordRequired: true,
    problems,
    fix:
      on && password
        ? undefined
        : makeFix({
            file: file.path,
            shownFile: source,
            summary: `set ${keys.enabledKey}=${keys.on}${password ? '' : ` and a new ${keys.passwordKey}`} under [${keys.section}] in ${source}`,
            setsPassword: !password,
            steps: [
              setIfNot(
                keys.enabledKey,
                (value) => parseFlag(value) === true,
                () => keys.on,
              ),
              setIfNot(
                keys.passwordKey,
                (value) => value !== '',
                (newPassword) => newPassword,
              ),
            ],
          }),
  };
}
