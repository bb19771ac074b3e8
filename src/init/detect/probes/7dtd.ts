import { join } from 'node:path';
import { gameConsole } from '../../game-transport.js';
import { fixSummary, makeFix } from '../fix.js';
import { decodeEntities, lastXmlProperty, parseServerConfigXml, setXmlProperty, type XmlProperty } from '../formats/serverconfig-xml.js';
import type { LoadedFile } from '../look.js';
import { option, type Probe, type ProbeContext } from '../probe.js';
import { hostPath, type ProcessHint } from '../recognise.js';
import { DEFAULT, fact, parseFlag, portFrom, unreadablePassword, type GameSettings } from '../settings.js';
import { decodeSettings, valueText } from '../text.js';
import type { Fix, Problem } from '../types.js';

/**
 * 7 Days to Die's serverconfig.xml (format: formats/serverconfig-xml.ts), or the file named by
 * `-configfile=`. As the shipped file says: `TelnetEnabled` true, `TelnetPort` 8081, and
 * `TelnetPassword` empty, in which case "the server will only listen on the local loopback
 * interface" — porter on the same machine gets in without a password.
 */
const DEFAULT_PORT = gameConsole('7dtd').port;
const KNOWN = new Set(['TelnetEnabled', 'TelnetPort', 'TelnetPassword', 'ServerPort', 'GameWorld', 'ServerName']);

function loopbackOnly(source: string, fix: Fix | undefined): Problem {
  return {
    code: 'telnet-loopback-only',
    severity: 'warning',
    message:
      `TelnetPassword is empty in ${source}: the server then takes telnet only on 127.0.0.1, without a password. ` +
      `That works while porter runs on this machine; to reach it from elsewhere, set a password${fix ? ' (porter can set one for you)' : ''}.`,
    fix,
  };
}

function makeTelnetFix(file: LoadedFile, enabled: boolean, hasPassword: boolean): Fix | undefined {
  if (enabled && hasPassword) return undefined;
  const properties = (text: string): XmlProperty[] => parseServerConfigXml(text);
  return makeFix({
    file: file.path,
    shownFile: file.shown,
    summary: fixSummary([!enabled && 'TelnetEnabled to true', !hasPassword && 'a new TelnetPassword'], file.shown),
    setsPassword: !hasPassword,
    steps: [
      (text) =>
        parseFlag(lastXmlProperty(properties(text), 'TelnetEnabled')?.value ?? 'true')
          ? undefined
          : setXmlProperty(text, properties(text), 'TelnetEnabled', 'true'),
      (text, password) =>
        lastXmlProperty(properties(text), 'TelnetPassword')?.value
          ? undefined
          : setXmlProperty(text, properties(text), 'TelnetPassword', password),
    ],
  });
}

function read(file: LoadedFile): GameSettings | undefined {
  const settings = decodeSettings(file.bytes);
  const properties = parseServerConfigXml(settings.text);
  if (!properties.some((property) => KNOWN.has(property.name))) return undefined;
  const source = file.shown;
  const enabledProperty = lastXmlProperty(properties, 'TelnetEnabled');
  const enabled = enabledProperty ? parseFlag(enabledProperty.value) : true;
  const { port, problems } = portFrom(lastXmlProperty(properties, 'TelnetPort')?.value, 'TelnetPort', source, DEFAULT_PORT);
  const passwordProperty = lastXmlProperty(properties, 'TelnetPassword');
  // The bytes decoded first, then the entities: `&#233;` is é, as the server's XmlDocument reads it.
  const rawPassword = passwordProperty && valueText(settings, settings.text.slice(passwordProperty.valueStart, passwordProperty.valueEnd));
  const password = rawPassword === undefined ? undefined : decodeEntities(rawPassword);
  if (passwordProperty && password === undefined) problems.push(unreadablePassword('TelnetPassword', source));
  const fix = makeTelnetFix(file, enabled === true, Boolean(password));
  if (!password) problems.push(loopbackOnly(source, fix));
  return {
    game: '7dtd',
    executor: gameConsole('7dtd').type,
    file: file.path,
    enabled: fact(enabled === true, 'TelnetEnabled', enabledProperty && enabled !== undefined ? source : DEFAULT),
    port,
    password: password === undefined ? undefined : fact(password, 'TelnetPassword', source),
    host: undefined,
    passwordRequired: false,
    problems,
    fix,
  };
}

function candidates(dir: string, _context: ProbeContext, hint?: ProcessHint): string[] {
  const named = hint && option(hint, 'configfile');
  // A relative -configfile is taken from the folder the server runs in.
  const path = named && hostPath(named.value, hint.cwd ?? dir);
  return [...(path ? [path] : []), join(dir, 'serverconfig.xml')];
}

export const sevenDaysProbe: Probe = {
  game: '7dtd',
  programs: [{ name: /^7DaysToDieServer(\.x86_64)?$/i, rootAbove: 0 }],
  candidates,
  read,
};
