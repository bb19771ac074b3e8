import { join } from 'node:path';
import { gameConsole } from '../../game-transport.js';
import type { LoadedFile } from '../look.js';
import type { Probe } from '../probe.js';
import { readUnrealRcon, type UnrealRcon } from './unreal-ini.js';

/**
 * Conan Exiles: ConanSandbox/Saved/Config/WindowsServer/Game.ini (LinuxServer in some container
 * images), section `[RconPlugin]`: `RconEnabled=1`, `RconPassword`, `RconPort` (25575 by default),
 * as Funcom's dedicated-server notes and the hosts' guides write it (RconEnabled takes 1/0 as
 * well as True/False).
 */
const CONAN: UnrealRcon = {
  game: 'conan',
  section: 'RconPlugin',
  enabledKey: 'RconEnabled',
  on: '1',
  portKey: 'RconPort',
  defaultPort: gameConsole('conan').port,
  passwordKey: 'RconPassword',
};

export const conanProbe: Probe = {
  game: 'conan',
  programs: [{ name: /^ConanSandboxServer(-Win64-Shipping)?$/i, rootAbove: 3 }],
  candidates: (dir) =>
    ['WindowsServer', 'LinuxServer'].map((platform) => join(dir, 'ConanSandbox', 'Saved', 'Config', platform, 'Game.ini')),
  read: (file: LoadedFile) => readUnrealRcon(file, CONAN),
};
