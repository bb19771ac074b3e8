import { join } from 'node:path';
import { gameConsole } from '../../game-transport.js';
import { findIni, parseIni } from '../formats/ini.js';
import type { LoadedFile } from '../look.js';
import { bareSettings, commandLineFacts, laidOver, option, type Probe } from '../probe.js';
import type { ProcessHint } from '../recognise.js';
import { bindHost, DEFAULT, fact, portFrom, type GameSettings } from '../settings.js';
import { decodeSettings } from '../text.js';
import { fixMissing, newIniPassword, passwordIn } from '../password-fix.js';

/**
 * Squad's SquadGame/ServerConfig/Rcon.cfg, as shipped with the server: `//` comment lines, then
 * `IP=0.0.0.0`, `Port=21114`, `Password=`; its own comments say that an empty password keeps RCON
 * off and that `RCONIP=`, `RCONPORT=` and `RCONPASSWORD=` on the command line set the same.
 */
const DEFAULT_PORT = gameConsole('squad').port;
const PLACE = { syntax: { comments: ['//'] }, section: undefined, pick: 'last' } as const;

function read(file: LoadedFile): GameSettings | undefined {
  const settings = decodeSettings(file.bytes);
  const ini = parseIni(settings.text, PLACE.syntax);
  const source = file.shown;
  const get = (key: string) => findIni(ini, undefined, key, 'last');
  if (!get('Port') && !get('Password')) return undefined;
  const { port, problems } = portFrom(get('Port')?.value, 'Port', source, DEFAULT_PORT);
  const password = passwordIn(settings, get('Password')?.value, 'Password', source, problems);
  return {
    ...bareSettings('squad', port),
    file: file.path,
    password,
    host: bindHost(get('IP')?.value, 'IP', source),
    problems,
    fix: fixMissing(file, { password: !password?.value && 'Password' }, [newIniPassword(PLACE, 'Password')]),
  };
}

function withCommandLine(settings: GameSettings | undefined, hint: ProcessHint): GameSettings | undefined {
  const ip = option(hint, 'RCONIP');
  const overrides = {
    ...commandLineFacts(hint, { port: ['RCONPORT'], password: ['RCONPASSWORD'] }),
    host: ip && bindHost(ip.value, ip.shown, hint.source),
  };
  return laidOver(settings, overrides, () => bareSettings('squad', fact(DEFAULT_PORT, 'Port', DEFAULT)));
}

export const squadProbe: Probe = {
  game: 'squad',
  programs: [{ name: /^SquadGameServer$/i, rootAbove: 3 }],
  candidates: (dir) => [join(dir, 'SquadGame', 'ServerConfig', 'Rcon.cfg')],
  read,
  withCommandLine,
};
