import { GAMES } from '../games/registry.js';
import type { DemoScenario } from '../games/record.js';
import type { TransportType } from '../protocols/transport-registry.js';
import type { DemoGameName } from './demo-game-names.js';

/**
 * The games `porter demo --game` can show: a game's record (src/games/<id>.ts) says what the demo
 * plays, and its console's transport which simulator it starts, playing the game by its id.
 */

/** A running simulated game server, as the demo needs it. */
export interface DemoGameServer {
  /** Where it listens, for the banner: "RCON 127.0.0.1:40123". */
  readonly address: string;
  /** The config's `executor` section for it, without the password (the demo writes a passwordFile). */
  readonly executor: { readonly type: TransportType } & Record<string, unknown>;
  join(player: string): void;
  /** The commands it ran so far, read-only listings left out, oldest first. */
  ran(): string[];
  close(): Promise<void>;
}

/** What every simulated game server in src/sim offers the demo. */
interface SimulatedGame {
  readonly host: string;
  readonly port: number;
  /** Every command it ran, read-only listings (`query`) included. */
  readonly executed: ReadonlyArray<{ readonly command: string; readonly query: boolean }>;
  join(player: string): void;
  close(): Promise<void>;
}

/** A simulated server as the demo sees it: porter reaches it by `type` at its host and port. */
function demoServer(server: SimulatedGame, type: TransportType, address: string): DemoGameServer {
  return {
    address,
    executor: { type, host: server.host, port: server.port },
    join: (player) => server.join(player),
    ran: () => server.executed.filter((e) => !e.query).map((e) => e.command),
    close: () => server.close(),
  };
}

export interface DemoGame extends DemoScenario {
  /** The config's `players.preset`. */
  readonly preset: DemoGameName;
  start(password: string, online: readonly string[]): Promise<DemoGameServer>;
}

type Simulator = (game: DemoGameName, password: string, online: readonly string[]) => Promise<DemoGameServer>;

async function rconGame(game: DemoGameName, password: string, online: readonly string[]): Promise<DemoGameServer> {
  const { startRconServer } = await import('../sim/rcon-server.js');
  const server = await startRconServer({ password, game, players: [...online] });
  return demoServer(server, 'rcon', `RCON ${server.host}:${server.port}`);
}

async function telnetGame(_game: DemoGameName, password: string, online: readonly string[]): Promise<DemoGameServer> {
  const { startTelnetServer } = await import('../sim/telnet-server.js');
  const server = await startTelnetServer({ password, players: [...online] });
  return demoServer(server, 'telnet', `telnet ${server.host}:${server.port}`);
}

async function tshockGame(_game: DemoGameName, token: string, online: readonly string[]): Promise<DemoGameServer> {
  const { startTShockServer } = await import('../sim/tshock-server.js');
  const server = await startTShockServer({ token, players: [...online] });
  return demoServer(server, 'tshock', `TShock REST ${server.url}`);
}

/** Vanilla BattlEye games give no item over RCon: the demo's server runs a store mod in its place (battleye-store-mod.ts). */
async function battleyeGame(_game: DemoGameName, password: string, online: readonly string[]): Promise<DemoGameServer> {
  const [{ startBattlEyeServer }, { demoStoreMod }] = await Promise.all([
    import('../sim/battleye-server.js'),
    import('./battleye-store-mod.js'),
  ]);
  const server = await startBattlEyeServer({ password, players: [...online], mod: demoStoreMod });
  return demoServer(server, 'battleye', `BattlEye RCon ${server.host}:${server.port} (UDP)`);
}

/**
 * The simulator of each transport a demo game's console speaks: a demo game on a transport
 * without one here is a compile error.
 */
const SIMULATORS: Readonly<Record<(typeof GAMES)[DemoGameName]['console']['transport'], Simulator>> = {
  rcon: rconGame,
  telnet: telnetGame,
  tshock: tshockGame,
  battleye: battleyeGame,
};

/** What `porter demo --game <name>` plays, from the game's record. */
export function demoGame(name: DemoGameName): DemoGame {
  const record = GAMES[name];
  return { ...record.demo, preset: name, start: (password, online) => SIMULATORS[record.console.transport](name, password, online) };
}
