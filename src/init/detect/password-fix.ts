import { lastConvar, parseConvars, setConvar } from './formats/convar-cfg.js';
import { findIni, parseIni, setIni, type IniSyntax } from './formats/ini.js';
import { fixSummary, makeFix, type FixStep } from './fix.js';
import { fact, unreadablePassword, type Fact } from './settings.js';
import { valueText, type SettingsText } from './text.js';
import type { Fix, Problem } from './types.js';

/**
 * The password a settings file holds under `setting`, given the raw value its format read
 * (undefined when the setting is absent). A value that is not valid text adds a problem and counts
 * as no password.
 */
export function passwordIn(
  settings: SettingsText,
  raw: string | undefined,
  setting: string,
  source: string,
  problems: Problem[],
): Fact<string> | undefined {
  if (raw === undefined) return undefined;
  const password = valueText(settings, raw);
  if (password === undefined) {
    problems.push(unreadablePassword(setting, source));
    return undefined;
  }
  return fact(password, setting, source);
}

/** What a settings file lacks for RCON: each part given only when it is missing. */
interface Missing {
  /** The change that switches RCON on ("RCONEnabled=True"), when it is off. */
  readonly switchOn?: string | false;
  /** The password's setting, when no password is set. */
  readonly password?: string | false;
  /** Where the summary says the change goes; the shown file by default. */
  readonly where?: string;
}

/** The fix that makes up for what is missing in `file`; undefined when nothing is. */
export function fixMissing(
  file: { readonly path: string; readonly shown: string },
  missing: Missing,
  steps: readonly FixStep[],
): Fix | undefined {
  const { switchOn = false, password = false } = missing;
  if (switchOn === false && password === false) return undefined;
  return makeFix({
    file: file.path,
    shownFile: file.shown,
    summary: fixSummary([switchOn, password !== false && `a new ${password}`], missing.where ?? file.shown),
    setsPassword: password !== false,
    steps,
  });
}

/** Where an ini key sits: the section (undefined for a file without sections) and which of two equal keys the game reads. */
interface IniPlace {
  readonly syntax: IniSyntax;
  readonly section: string | undefined;
  readonly pick: 'first' | 'last';
}

/** A step that sets `key` to `value(newPassword)` unless its value is already `wanted`. */
export function setIniUnless(
  place: IniPlace,
  key: string,
  wanted: (value: string) => boolean,
  value: (newPassword: string) => string,
): FixStep {
  return (text, newPassword) => {
    const now = parseIni(text, place.syntax);
    const entry = findIni(now, place.section, key, place.pick);
    return entry && wanted(entry.value) ? undefined : setIni(text, now, place.section, key, value(newPassword), place.pick);
  };
}

/** A step that writes the new password into an ini key that is empty or absent. */
export function newIniPassword(place: IniPlace, key: string): FixStep {
  return setIniUnless(
    place,
    key,
    (value) => value !== '',
    (newPassword) => newPassword,
  );
}

/** A step that writes the new password into a console variable that is empty or absent. */
export function newConvarPassword(name: string): FixStep {
  return (text, newPassword) => {
    const now = parseConvars(text);
    return lastConvar(now, name)?.value ? undefined : setConvar(text, now, name, newPassword);
  };
}
