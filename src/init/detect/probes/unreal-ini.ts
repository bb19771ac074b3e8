import { findIni, parseIni } from '../formats/ini.js';
import type { LoadedFile } from '../look.js';
import { bareSettings } from '../probe.js';
import { DEFAULT, fact, parseFlag, portFrom, type GameSettings } from '../settings.js';
import { decodeSettings } from '../text.js';
import type { DetectedGame } from '../types.js';
import { fixMissing, newIniPassword, passwordIn, setIniUnless } from '../password-fix.js';

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
  const password = passwordIn(settings, get(keys.passwordKey)?.value, keys.passwordKey, source, problems);
  const on = enabled === true;
  const place = { syntax: SYNTAX, section: keys.section, pick: 'first' } as const;
  return {
    ...bareSettings(keys.game, port, fact(on, keys.enabledKey, enabledEntry && enabled !== undefined ? source : DEFAULT)),
    file: file.path,
    password,
    problems,
    fix: fixMissing(
      file,
      {
        switchOn: !on && `${keys.enabledKey}=${keys.on}`,
        password: !password?.value && keys.passwordKey,
        where: `[${keys.section}] of ${source}`,
      },
      [
        setIniUnless(
          place,
          keys.enabledKey,
          (value) => parseFlag(value) === true,
          () => keys.on,
        ),
        newIniPassword(place, keys.passwordKey),
      ],
    ),
  };
}
