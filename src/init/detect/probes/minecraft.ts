import { dirname, join } from 'node:path';
import { gameConsole } from '../../game-transport.js';
import { fixSummary, makeFix } from '../fix.js';
import { lastProperty, parseProperties, setProperty, type PropertyEntry } from '../formats/java-properties.js';
import type { LoadedFile } from '../look.js';
import type { Probe, ProbeContext } from '../probe.js';
import { bindHost, DEFAULT, fact, portFrom, unreadablePassword, type GameSettings } from '../settings.js';
import { decodeSettings, valueText, type SettingsText } from '../text.js';
import { withItzg } from './itzg.js';

/**
 * Minecraft Java Edition's server.properties (format: formats/java-properties.ts). Keys and
 * defaults as the 1.20 server writes them (the file quoted in test/fixtures/game-dirs/README.md):
 * `enable-rcon=false`, `rcon.port=25575`, `rcon.password=` (empty), `server-ip=`. The server reads
 * enable-rcon as Boolean.parseBoolean (only "true" is true) and opens no RCON with an empty
 * password. When server-ip is set, porter connects there: it is an address of this machine the
 * server listens on, and a server bound to it alone would not answer on 127.0.0.1.
 */
const DEFAULT_PORT = gameConsole('minecraft').port;

/** Keys only a Java Edition server.properties has together; Bedrock's also has server-portv6. */
const JAVA_KEYS = new Set(['enable-rcon', 'rcon.port', 'rcon.password', 'enable-query', 'online-mode', 'level-name', 'motd']);

function isJavaProperties(entries: readonly PropertyEntry[]): boolean {
  return entries.some((entry) => JAVA_KEYS.has(entry.key)) && !entries.some((entry) => entry.key === 'server-portv6');
}

/**
 * A value as the server reads it: the file's bytes decoded first, then the format's escapes, so
 * `\u00e9` and a UTF-8 é are both é (unescaping first would make `\u4e2d` a byte, then garbage).
 */
function decodedValue(settings: SettingsText, entry: PropertyEntry): string | undefined {
  const raw = valueText(settings, settings.text.slice(entry.valueStart, entry.valueEnd));
  return raw === undefined ? undefined : (parseProperties(`k=${raw}`)[0]?.value ?? '');
}

function read(file: LoadedFile, context: ProbeContext): GameSettings | undefined {
  const settings = decodeSettings(file.bytes);
  const entries = parseProperties(settings.text);
  if (!isJavaProperties(entries)) return undefined;
  const source = file.shown;
  const enable = lastProperty(entries, 'enable-rcon');
  const { port, problems } = portFrom(lastProperty(entries, 'rcon.port')?.value, 'rcon.port', source, DEFAULT_PORT);
  const passwordEntry = lastProperty(entries, 'rcon.password');
  const password = passwordEntry && decodedValue(settings, passwordEntry);
  if (passwordEntry && password === undefined) problems.push(unreadablePassword('rcon.password', source));
  const enabled = enable?.value.toLowerCase() === 'true';
  const fileSettings: GameSettings = {
    game: 'minecraft',
    executor: gameConsole('minecraft').type,
    file: file.path,
    enabled: fact(enabled, 'enable-rcon', enable ? source : DEFAULT),
    port,
    password: password === undefined ? undefined : fact(password, 'rcon.password', source),
    host: bindHost(lastProperty(entries, 'server-ip')?.value, 'server-ip', source),
    passwordRequired: true,
    problems,
    fix:
      enabled && password
        ? undefined
        : makeFix({
            file: file.path,
            shownFile: source,
            summary: fixSummary([!enabled && 'enable-rcon=true', !password && 'a new rcon.password'], source),
            setsPassword: !password,
            steps: [
              (text) => {
                const now = parseProperties(text);
                return lastProperty(now, 'enable-rcon')?.value.toLowerCase() === 'true'
                  ? undefined
                  : setProperty(text, now, 'enable-rcon', 'true');
              },
              (text, newPassword) => {
                const now = parseProperties(text);
                return lastProperty(now, 'rcon.password')?.value ? undefined : setProperty(text, now, 'rcon.password', newPassword);
              },
            ],
          }),
  };
  return withItzg(fileSettings, dirname(file.path), context);
}

export const minecraftProbe: Probe = {
  game: 'minecraft',
  programs: [],
  candidates: (dir, context) =>
    [dir, context.places.containerData].flatMap((folder) => (folder ? [join(folder, 'server.properties')] : [])),
  read,
};
