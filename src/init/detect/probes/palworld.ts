import { join } from 'node:path';
import { gameConsole } from '../../game-transport.js';
import { findPalworldOption, newPalworldSettings, parsePalworldSettings, setPalworldOption } from '../formats/palworld-settings.js';
import type { LoadedFile } from '../look.js';
import { bareSettings, commandLineFacts, laidOver, type Probe } from '../probe.js';
import type { ProcessHint } from '../recognise.js';
import { DEFAULT, fact, parseFlag, portFrom, type GameSettings } from '../settings.js';
import { decodeSettings, lineBreakOf } from '../text.js';
import { fixMissing, passwordIn } from '../password-fix.js';

/**
 * Palworld's PalWorldSettings.ini (format: formats/palworld-settings.ts), in
 * Pal/Saved/Config/LinuxServer or WindowsServer. RCON is `RCONEnabled` (False by default),
 * `RCONPort` (25575) and the `AdminPassword` (empty by default), as in the shipped
 * DefaultPalWorldSettings.ini. A new server's file is empty, so everything is at its default and
 * RCON is off. `-RCONPort=` on the command line overrides the port (the workaround for server
 * 0.1.5.0 noted in NikDidIt/SimplePalworldStatus).
 */
const DEFAULT_PORT = gameConsole('palworld').port;
const CONFIG = ['Pal', 'Saved', 'Config'];

function read(file: LoadedFile): GameSettings | undefined {
  const settings = decodeSettings(file.bytes);
  const source = file.shown;
  const list = parsePalworldSettings(settings.text);
  // A file with other content but no option list is not one the server wrote.
  if (!list && settings.text.trim() !== '') return undefined;
  const enabledOption = list && findPalworldOption(list, 'RCONEnabled');
  const enabled = enabledOption && parseFlag(enabledOption.value);
  const { port, problems } = portFrom(list && findPalworldOption(list, 'RCONPort')?.value, 'RCONPort', source, DEFAULT_PORT);
  const password = passwordIn(settings, list && findPalworldOption(list, 'AdminPassword')?.value, 'AdminPassword', source, problems);
  const on = enabled === true;
  return {
    ...bareSettings('palworld', port, fact(on, 'RCONEnabled', enabledOption && enabled !== undefined ? source : DEFAULT)),
    file: file.path,
    password,
    problems,
    fix: fixMissing(file, { switchOn: !on && 'RCONEnabled=True', password: !password?.value && 'AdminPassword' }, [
      (text, newPassword) => {
        if (parsePalworldSettings(text) || text.trim() !== '') return undefined;
        const options = [
          ['RCONEnabled', 'True', false],
          ['RCONPort', String(DEFAULT_PORT), false],
          ['AdminPassword', newPassword, true],
        ] as const;
        return { start: 0, end: text.length, text: newPalworldSettings(options, lineBreakOf(text)) };
      },
      (text) => {
        const now = parsePalworldSettings(text);
        return !now || parseFlag(findPalworldOption(now, 'RCONEnabled')?.value ?? '')
          ? undefined
          : setPalworldOption(now, 'RCONEnabled', 'True', false);
      },
      (text, newPassword) => {
        const now = parsePalworldSettings(text);
        return !now || findPalworldOption(now, 'AdminPassword')?.value
          ? undefined
          : setPalworldOption(now, 'AdminPassword', newPassword, true);
      },
    ]),
  };
}

function withCommandLine(settings: GameSettings | undefined, hint: ProcessHint): GameSettings | undefined {
  return laidOver(settings, commandLineFacts(hint, { port: ['RCONPort'] }), () =>
    bareSettings('palworld', fact(DEFAULT_PORT, 'RCONPort', DEFAULT), fact(false, 'RCONEnabled', DEFAULT)),
  );
}

export const palworldProbe: Probe = {
  game: 'palworld',
  programs: [
    { name: /^PalServer(-Linux-(Shipping|Test)|-Win64-(Shipping|Test)(-Cmd)?)$/i, rootAbove: 3 },
    { name: /^PalServer$/i, rootAbove: 0 },
  ],
  candidates: (dir) => ['LinuxServer', 'WindowsServer'].map((platform) => join(dir, ...CONFIG, platform, 'PalWorldSettings.ini')),
  read,
  withCommandLine,
};
