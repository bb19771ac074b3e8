import { basename, dirname } from 'node:path';
import { gameConsole } from '../../game-transport.js';
import { fixSummary, makeFix } from '../fix.js';
import { lastBattleyeSetting, parseBattleyeCfg, setBattleyeSetting } from '../formats/battleye-cfg.js';
import type { LoadedFile, Look } from '../look.js';
import { option, type Probe, type ProbeContext } from '../probe.js';
import { hostPath, type ProcessHint, type ServerProgram } from '../recognise.js';
import { bindHost, fact, parsePort, unreadablePassword, type GameSettings } from '../settings.js';
import { decodeSettings, valueText } from '../text.js';
import type { Problem } from '../types.js';

/**
 * BattlEye RCon for DayZ and Arma 3 (format: formats/battleye-cfg.ts). The file sits beside
 * BEServer_x64.dll: the server's `battleye` folder, `<profiles>/BattlEye`, or the folder `-BEpath=`
 * names; Linux servers spell it beserver_x64.cfg. While the server runs, BattlEye works from a
 * renamed copy, BEServer_x64_active_<random>.cfg, which is then the one that counts. Without
 * RConPort no RCon port is open; CFTools suggests the game port + 3 (2305 for DayZ's 2302), and
 * Arma 3 hosts use 2306 beside its 2302-2305. RestrictRCon defaults to 1, which refuses kick, ban
 * and shutdown over RCon.
 */
type BattleyeGame = 'dayz' | 'arma3';
const SUGGESTED_PORT: Readonly<Record<BattleyeGame, number>> = { dayz: gameConsole('dayz').port, arma3: 2306 };
const MARKERS: Readonly<Record<BattleyeGame, RegExp>> = {
  dayz: /^(DayZServer(_x64)?(\.exe)?|serverDZ\.cfg)$/i,
  arma3: /^arma3server(_x64|_x86_64)?(\.exe)?$/i,
};
const CONFIG = /^beserver(_x64)?(_active_\w+)?\.cfg$/i;
const ACTIVE = /_active_/i;

/** Which game the folders around a BattlEye folder belong to (the server's root is one or two levels up). */
function gameNear(file: string, look: Look): BattleyeGame | undefined {
  const battleye = dirname(file);
  for (const root of [dirname(battleye), dirname(dirname(battleye))]) {
    const names = look.list(root);
    for (const game of ['dayz', 'arma3'] as const) if (names.some((name) => MARKERS[game].test(name))) return game;
  }
  return undefined;
}

function portMissing(game: BattleyeGame, source: string): Problem {
  return {
    code: 'port-missing',
    severity: 'error',
    message: `RConPort is not set in ${source}, so BattlEye opens no RCon port. Set RConPort (porter can add RConPort ${SUGGESTED_PORT[game]}), then restart the game server.`,
  };
}

function restricted(source: string): Problem {
  return {
    code: 'rcon-restricted',
    severity: 'warning',
    message: `RestrictRCon is not 0 in ${source}: BattlEye refuses kick, ban and shutdown over RCon. Set RestrictRCon 0 if deliveries need them.`,
  };
}

function readAs(game: BattleyeGame, file: LoadedFile, uncertain: boolean): GameSettings | undefined {
  const settings = decodeSettings(file.bytes);
  const entries = parseBattleyeCfg(settings.text);
  const source = file.shown;
  const passwordEntry = lastBattleyeSetting(entries, 'RConPassword');
  const portEntry = lastBattleyeSetting(entries, 'RConPort');
  const port = portEntry && parsePort(portEntry.value);
  const problems: Problem[] = [];
  const password = passwordEntry && valueText(settings, passwordEntry.value);
  if (passwordEntry && password === undefined) problems.push(unreadablePassword('RConPassword', source));
  if ((lastBattleyeSetting(entries, 'RestrictRCon')?.value ?? '1') !== '0') problems.push(restricted(source));
  if (uncertain) {
    problems.push({
      code: 'game-uncertain',
      severity: 'warning',
      message: `No DayZ or Arma 3 server program was found near ${source}; porter guessed ${gameConsole(game).title}. Check the game.`,
    });
  }
  const fix =
    password && port !== undefined
      ? undefined
      : makeFix({
          file: file.path,
          shownFile: source,
          summary: fixSummary([!password && 'a new RConPassword', port === undefined && `RConPort ${SUGGESTED_PORT[game]}`], source),
          setsPassword: !password,
          steps: [
            (text, newPassword) => {
              const now = parseBattleyeCfg(text);
              return lastBattleyeSetting(now, 'RConPassword')?.value
                ? undefined
                : setBattleyeSetting(text, now, 'RConPassword', newPassword);
            },
            (text) => {
              const now = parseBattleyeCfg(text);
              return parsePort(lastBattleyeSetting(now, 'RConPort')?.value ?? '')
                ? undefined
                : setBattleyeSetting(text, now, 'RConPort', String(SUGGESTED_PORT[game]));
            },
          ],
        });
  if (port === undefined) problems.push({ ...portMissing(game, source), fix });
  return {
    game,
    executor: gameConsole(game).type,
    file: file.path,
    enabled: undefined,
    port: fact(port ?? SUGGESTED_PORT[game], 'RConPort', port === undefined ? 'not set' : source),
    password: password === undefined ? undefined : fact(password, 'RConPassword', source),
    host: bindHost(lastBattleyeSetting(entries, 'RConIP')?.value, 'RConIP', source),
    passwordRequired: true,
    problems,
    fix,
  };
}

/** BattlEye folders for a server kept in `dir`: its own, its profile folder's, and the one a running server names. */
function battleyeFolders(dir: string, look: Look, hint: ProcessHint | undefined): string[] {
  const named = (name: string) => {
    const value = hint && option(hint, name);
    return value && hostPath(value.value, hint.cwd ?? dir);
  };
  const bePath = named('bepath');
  const profiles = named('profiles');
  const roots = [dir, ...look.matching(dir, /^(profiles?|config|sc)$/i), ...(profiles ? [profiles] : [])];
  return [...(bePath ? [bePath] : []), ...roots.flatMap((root) => look.matching(root, /^battleye$/i))];
}

function candidates(dir: string, context: ProbeContext, hint?: ProcessHint): string[] {
  return battleyeFolders(dir, context.look, hint).flatMap((folder) => {
    const configs = context.look.matching(folder, CONFIG);
    const active = configs.filter((path) => ACTIVE.test(basename(path)));
    return active.length > 0 ? active.slice(0, 1) : configs;
  });
}

/** The dedicated servers' programs, by game. */
const PROGRAMS: Readonly<Record<BattleyeGame, ServerProgram>> = {
  dayz: { name: /^DayZServer(_x64)?$/i, rootAbove: 0 },
  arma3: { name: /^arma3server(_x64|_x86_64)?$/i, rootAbove: 0 },
};

function probeFor(game: BattleyeGame): Probe {
  return {
    game,
    programs: [PROGRAMS[game]],
    candidates,
    read(file, context, hint) {
      const near = hint ? hint.game : gameNear(file.path, context.look);
      // With no marker either way, the file is reported once, as DayZ's, with a warning.
      if (near === undefined) return game === 'dayz' ? readAs(game, file, true) : undefined;
      return near === game ? readAs(game, file, false) : undefined;
    },
  };
}

export const dayzProbe = probeFor('dayz');
export const arma3Probe = probeFor('arma3');
