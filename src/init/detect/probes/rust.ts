import { join } from 'node:path';
import { lastConvar, parseConvars, type Convar } from '../formats/convar-cfg.js';
import type { LoadedFile } from '../look.js';
import { bareSettings, laidOver, option, type Overrides, type Probe, type ProbeContext } from '../probe.js';
import type { ProcessHint } from '../recognise.js';
import { bindHost, DEFAULT, fact, parseFlag, parsePort, type Fact, type GameSettings } from '../settings.js';
import { decodeSettings } from '../text.js';
import type { Problem } from '../types.js';
import { fixMissing, newConvarPassword, passwordIn } from '../password-fix.js';

/**
 * Rust: console variables on the command line (`+rcon.port 28016 +rcon.password "…" +rcon.web 1`,
 * the launch line of Facepunch's server guide) and in server/<identity>/cfg/server.cfg (format:
 * formats/convar-cfg.ts; identity `my_server_identity` unless `+server.identity`). `rcon.web 1`
 * (the default since devblog 155) is WebRCON, `0` Source RCON; an empty `rcon.password` leaves RCON
 * off; an unset `rcon.port` means server.port (28015 by default), as server hosts' port tables
 * show (RCON on 28015/tcp beside the game on 28015/udp).
 */
const DEFAULT_GAME_PORT = 28015;
const RUST_PREFIXES = /^(server|rcon|fps|decay|env|app|ai|global)\./;

interface RustValues {
  readonly port: Fact<number>;
  readonly web: Fact<boolean> | undefined;
  readonly host: Fact<string> | undefined;
}

function executorOf(web: Fact<boolean> | undefined): 'webrcon' | 'rcon' {
  return web?.value === false ? 'rcon' : 'webrcon';
}

function portAssumed(port: Fact<number>): Problem[] {
  if (port.setting === 'rcon.port' || port.setting === '+rcon.port') return [];
  return [
    {
      code: 'port-assumed',
      severity: 'warning',
      message: `rcon.port is not set, so Rust takes server.port (${port.value}) for RCON; if porter cannot connect, start the server with +rcon.port and use that port.`,
    },
  ];
}

function fileValues(convars: readonly Convar[], source: string): RustValues {
  const rconPort = parsePort(lastConvar(convars, 'rcon.port')?.value ?? '');
  const gamePort = parsePort(lastConvar(convars, 'server.port')?.value ?? '');
  const web = parseFlag(lastConvar(convars, 'rcon.web')?.value ?? '');
  const port =
    rconPort !== undefined
      ? fact(rconPort, 'rcon.port', source)
      : gamePort !== undefined
        ? fact(gamePort, 'server.port', source)
        : fact(DEFAULT_GAME_PORT, 'server.port', DEFAULT);
  return {
    port,
    web: web === undefined ? undefined : fact(web, 'rcon.web', source),
    host: bindHost(lastConvar(convars, 'rcon.ip')?.value, 'rcon.ip', source),
  };
}

function read(file: LoadedFile): GameSettings | undefined {
  const settings = decodeSettings(file.bytes);
  const convars = parseConvars(settings.text);
  if (!convars.some((convar) => RUST_PREFIXES.test(convar.name))) return undefined;
  const source = file.shown;
  const values = fileValues(convars, source);
  const problems: Problem[] = [];
  const password = passwordIn(settings, lastConvar(convars, 'rcon.password')?.value, 'rcon.password', source, problems);
  return {
    ...bareSettings('rust', values.port, undefined, executorOf(values.web)),
    file: file.path,
    password,
    host: values.host,
    problems,
    fix: fixMissing(file, { password: !password?.value && 'rcon.password' }, [newConvarPassword('rcon.password')]),
  };
}

function withCommandLine(settings: GameSettings | undefined, hint: ProcessHint): GameSettings | undefined {
  const rconPort = option(hint, 'rcon.port');
  const gamePort = option(hint, 'server.port');
  const password = option(hint, 'rcon.password');
  const ip = option(hint, 'rcon.ip');
  const web = option(hint, 'rcon.web');
  const fromFile = settings?.port.setting === 'rcon.port';
  const portOption = rconPort ?? (fromFile ? undefined : gamePort);
  const port = portOption && parsePort(portOption.value);
  const webValue = web && parseFlag(web.value);
  const webFact = web && webValue !== undefined ? fact(webValue, web.shown, hint.source) : undefined;
  const overrides: Overrides = {
    port: portOption && port !== undefined ? fact(port, portOption.shown, hint.source) : undefined,
    password: password && fact(password.value, password.shown, hint.source),
    host: ip && bindHost(ip.value, ip.shown, hint.source),
  };
  const laid = laidOver(settings, overrides, () => bareSettings('rust', fact(DEFAULT_GAME_PORT, 'server.port', DEFAULT)));
  if (!laid) return undefined;
  return withPortWarning({ ...laid, executor: webFact ? executorOf(webFact) : laid.executor });
}

function candidates(dir: string, context: ProbeContext, hint?: ProcessHint): string[] {
  // A running server without +server.identity uses Rust's default identity.
  const identity = hint ? (option(hint, 'server.identity')?.value ?? 'my_server_identity') : undefined;
  const identities = identity !== undefined ? [identity] : context.look.list(join(dir, 'server'));
  return identities.map((name) => join(dir, 'server', name, 'cfg', 'server.cfg'));
}

/** The port warning recomputed once the last source of the port is known. */
function withPortWarning(settings: GameSettings): GameSettings {
  const others = settings.problems.filter((problem) => problem.code !== 'port-assumed');
  return { ...settings, problems: [...others, ...portAssumed(settings.port)] };
}

export const rustProbe: Probe = {
  game: 'rust',
  programs: [{ name: /^RustDedicated$/i, rootAbove: 0 }],
  candidates,
  read: (file) => {
    const settings = read(file);
    return settings && withPortWarning(settings);
  },
  withCommandLine,
};
