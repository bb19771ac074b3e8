import { join } from 'node:path';
import { gameConsole } from '../../game-transport.js';
import { lastConvar, parseConvars } from '../formats/convar-cfg.js';
import type { LoadedFile } from '../look.js';
import { bareSettings, commandLineFacts, laidOver, option, type Probe } from '../probe.js';
import type { ProcessHint } from '../recognise.js';
import { bindHost, DEFAULT, fact, type Fact, type GameSettings } from '../settings.js';
import { decodeSettings } from '../text.js';
import type { Problem } from '../types.js';
import { fixMissing, newConvarPassword, passwordIn } from '../password-fix.js';

/**
 * Source engine servers (CS2, CS:GO, CS:S, TF2, Garry's Mod, L4D2): `rcon_password "…"` in
 * `<game folder>/cfg/server.cfg` (format: formats/convar-cfg.ts; CS2 keeps it in game/csgo/cfg,
 * per Valve's "Counter-Strike 2 Dedicated Servers" page). RCON listens on the game port over TCP:
 * `-port` on the command line (or `+hostport`), 27015 by default; an empty rcon_password leaves it
 * off. A `+rcon_password` on the command line overrides the file.
 */
const DEFAULT_PORT = gameConsole('source').port;
const GAME_FOLDERS = [join('game', 'csgo'), 'csgo', 'cstrike', 'tf', 'garrysmod', 'left4dead2', 'dod', 'hl2mp', ''];
/** Rust's server.cfg has the same syntax; its variables have dotted names. */
const RUST_LOOKING = /^(server|rcon|fps|decay|env|app)\./;

function portAssumed(port: Fact<number>): Problem[] {
  if (port.source !== DEFAULT) return [];
  return [
    {
      code: 'port-assumed',
      severity: 'warning',
      message: `RCON listens on the game port; no -port was seen, so porter assumes ${DEFAULT_PORT}. If the server starts with another -port, use that.`,
    },
  ];
}

function read(file: LoadedFile): GameSettings | undefined {
  const settings = decodeSettings(file.bytes);
  const convars = parseConvars(settings.text);
  if (convars.some((convar) => RUST_LOOKING.test(convar.name))) return undefined;
  const source = file.shown;
  const problems: Problem[] = [];
  const password = passwordIn(settings, lastConvar(convars, 'rcon_password')?.value, 'rcon_password', source, problems);
  return {
    ...bareSettings('source', fact(DEFAULT_PORT, '-port', DEFAULT)),
    file: file.path,
    password,
    problems,
    fix: fixMissing(file, { password: !password?.value && 'rcon_password' }, [newConvarPassword('rcon_password')]),
  };
}

function withCommandLine(settings: GameSettings | undefined, hint: ProcessHint): GameSettings | undefined {
  const ip = option(hint, 'ip');
  const overrides = {
    ...commandLineFacts(hint, { port: ['port', 'hostport'], password: ['rcon_password'] }),
    host: ip && bindHost(ip.value, ip.shown, hint.source),
  };
  return laidOver(settings, overrides, () => bareSettings('source', fact(DEFAULT_PORT, '-port', DEFAULT)));
}

function candidates(dir: string, _context: unknown, hint?: ProcessHint): string[] {
  const game = hint && option(hint, 'game');
  const folders = game ? [game.value] : GAME_FOLDERS;
  return folders.map((folder) => join(dir, folder, 'cfg', 'server.cfg'));
}

/** The port warning recomputed once the last source of the port is known. */
function withPortWarning(settings: GameSettings | undefined): GameSettings | undefined {
  if (!settings) return undefined;
  const others = settings.problems.filter((problem) => problem.code !== 'port-assumed');
  return { ...settings, problems: [...others, ...portAssumed(settings.port)] };
}

export const sourceProbe: Probe = {
  game: 'source',
  programs: [
    { name: /^srcds(_linux|_linux64|_run|_x64)?$/i, rootAbove: 0 },
    { name: /^cs2$/i, rootAbove: 3, when: (argv) => argv.includes('-dedicated') },
  ],
  candidates,
  read: (file) => withPortWarning(read(file)),
  withCommandLine: (settings, hint) => withPortWarning(withCommandLine(settings, hint)),
};
