import { join } from 'node:path';
import { gameConsole } from '../../game-transport.js';
import type { LoadedFile } from '../look.js';
import { bareSettings, commandLineFacts, laidOver, type Probe } from '../probe.js';
import type { ProcessHint } from '../recognise.js';
import { DEFAULT, fact, type GameSettings } from '../settings.js';
import { readUnrealRcon, type UnrealRcon } from './unreal-ini.js';

/**
 * ARK: Survival Evolved / Ascended: ShooterGame/Saved/Config/LinuxServer|WindowsServer/
 * GameUserSettings.ini, section `[ServerSettings]`: `RCONEnabled=True`, `RCONPort` (27020 by
 * default) and `ServerAdminPassword`, the RCON password (ARK server configuration references,
 * e.g. arkmanager's settings table; an unset RCONEnabled is taken as off). The map URL on the
 * command line (`TheIsland?listen?RCONEnabled=True?RCONPort=…?ServerAdminPassword=…`) overrides
 * the file.
 */
const ARK: UnrealRcon = {
  game: 'ark',
  section: 'ServerSettings',
  enabledKey: 'RCONEnabled',
  on: 'True',
  portKey: 'RCONPort',
  defaultPort: gameConsole('ark').port,
  passwordKey: 'ServerAdminPassword',
};

function withCommandLine(settings: GameSettings | undefined, hint: ProcessHint): GameSettings | undefined {
  const overrides = commandLineFacts(hint, { enabled: ['RCONEnabled'], port: ['RCONPort'], password: ['ServerAdminPassword'] });
  return laidOver(settings, overrides, () =>
    bareSettings('ark', fact(ARK.defaultPort, 'RCONPort', DEFAULT), fact(false, 'RCONEnabled', DEFAULT)),
  );
}

export const arkProbe: Probe = {
  game: 'ark',
  programs: [{ name: /^(ShooterGameServer|ArkAscendedServer)$/i, rootAbove: 3 }],
  candidates: (dir) =>
    ['LinuxServer', 'WindowsServer'].map((platform) => join(dir, 'ShooterGame', 'Saved', 'Config', platform, 'GameUserSettings.ini')),
  read: (file: LoadedFile) => readUnrealRcon(file, ARK),
  withCommandLine,
};
