import { join } from 'node:path';
import { makeFix } from '../fix.js';
import { findIni, parseIni, setIni } from '../formats/ini.js';
import type { LoadedFile } from '../look.js';
import { bareSettings, commandLineFacts, laidOver, option, type Probe } from '../probe.js';
import type { ProcessHint } from '../recognise.js';
import { bindHost, DEFAULT, fact, portFrom, unreadablePassword, type GameSettings } from '../settings.js';
import { decodeSettings, valueText } from '../text.js';

/**
 * Squad's SquadGame/ServerConfig/Rcon.cfg, as shipped with the server: `//` comment lines, then
 * `IP=0.0.0.0`, `Port=21114`, `Password=`; its own comments say that an empty password keeps RCON
 * off and that `RCONIP=`, `RCONPORT=` and `RCONPASSWORD=` on the command line set the same.
 */
const DEFAULT_PORT = 21114;
const SYNTAX = { comments: ['//'] };

function read(file: LoadedFile): GameSettings | undefined {
  const settings = decodeSettings(file.bytes);
  const ini = parseIni(settings.text, SYNTAX);
  const source = file.shown;
  const get = (key: string) => findIni(ini, undefined, key, 'last');
  if (!get('Port') && !get('Password')) return undefined;
  const { port, problems } = portFrom(get('Port')?.value, 'Port', source, DEFAULT_PORT);
  const passwordEntry = get('Password');
  const password = passwordEntry && valueText(settings, passwordEntry.value);
  if (passwordEntry && password === undefined) problems.push(unreadablePassword('Password', source));
  return {
    game: 'squad',
    executor: 'rcon',
    file: file.path,
    enabled: undefined,
    port,
    password: password === undefined ? undefined : fact(password, 'Password', source),
    host: bindHost(get('IP')?.value, 'IP', source),
    passwordRequired: true,
    problems,
    fix: password
      ? undefined
      : makeFix({
          file: file.path,
          shownFile: source,
          summary: `set a new Password in ${source}`,
          setsPassword: true,
          steps: [
            (text, newPassword) => {
              const now = parseIni(text, SYNTAX);
              return findIni(now, undefined, 'Password', 'last')?.value
                ? undefined
                : setIni(text, now, undefined, 'Password', newPassword, 'last');
            },
          ],
        }),
  };
}

function withCommandLine(settings: GameSettings | undefined, hint: ProcessHint): GameSettings | undefined {
  const ip = option(hint, 'RCONIP');
  const overrides = {
    ...commandLineFacts(hint, { port: ['RCONPORT'], password: ['RCONPASSWORD'] }),
    host: ip && bindHost(ip.value, ip.shown, hint.source),
  };
  return laidOver(settings, overrides, () => bareSettings('squad', 'rcon', fact(DEFAULT_PORT, 'Port', DEFAULT)));
}

export const squadProbe: Probe = {
  game: 'squad',
  candidates: (dir) => [join(dir, 'SquadGame', 'ServerConfig', 'Rcon.cfg')],
  read,
  withCommandLine,
};
