import type { GameName } from '../games/registry.js';
import type { TransportType } from '../protocols/descriptors.js';
import type { DemoGameName } from './demo-game-names.js';

/**
 * The games `porter demo --game` can show: each starts its simulated game server and says how
 * porter reaches it. A game added here (a game of src/games/registry.ts) is named in DEMO_GAME_NAMES
 * (demo-game-names.ts), the CLI's `--game` choices.
 */

export interface DemoPurchase {
  readonly command: string;
  readonly player: string;
  readonly offlineExecute: boolean;
}

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

/** What every simulated game server in src/fakes offers the demo. */
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

export interface DemoGame {
  readonly title: string;
  /** The config's `players.preset`. */
  readonly preset: GameName;
  readonly online: string;
  readonly joiner: string;
  readonly absent: string;
  readonly purchases: readonly DemoPurchase[];
  readonly thanks: string;
  /** The config's `failurePatterns`, for a game whose failure answers come from a mod. */
  readonly failurePatterns?: readonly string[];
  start(password: string, online: readonly string[]): Promise<DemoGameServer>;
}

async function rconGame(
  options: { flavour: 'minecraft' | 'source'; game?: 'zomboid' },
  password: string,
  online: readonly string[],
): Promise<DemoGameServer> {
  const { startRconServer } = await import('../fakes/rcon-server.js');
  const server = await startRconServer({ password, ...options, players: [...online] });
  return demoServer(server, 'rcon', `RCON ${server.host}:${server.port}`);
}

async function sevenDaysGame(password: string, online: readonly string[]): Promise<DemoGameServer> {
  const { startTelnetServer } = await import('../fakes/telnet-server.js');
  const server = await startTelnetServer({ password, players: [...online] });
  return demoServer(server, 'telnet', `telnet ${server.host}:${server.port}`);
}

async function tshockGame(token: string, online: readonly string[]): Promise<DemoGameServer> {
  const { startTShockServer } = await import('../fakes/tshock-server.js');
  const server = await startTShockServer({ token, players: [...online] });
  return demoServer(server, 'tshock', `TShock REST ${server.url}`);
}

async function dayzGame(password: string, online: readonly string[]): Promise<DemoGameServer> {
  const [{ startBattlEyeServer }, { demoStoreMod }] = await Promise.all([
    import('../fakes/battleye-server.js'),
    import('./battleye-store-mod.js'),
  ]);
  const server = await startBattlEyeServer({ password, players: [...online], mod: demoStoreMod });
  return demoServer(server, 'battleye', `BattlEye RCon ${server.host}:${server.port} (UDP)`);
}

export const DEMO_GAMES = {
  minecraft: {
    title: 'Minecraft',
    preset: 'minecraft',
    online: 'Steve',
    joiner: 'Alex',
    absent: 'Notch',
    purchases: [
      { command: 'give Steve diamond 64', player: 'Steve', offlineExecute: false },
      { command: 'lp user Steve parent set vip', player: 'Steve', offlineExecute: true },
      { command: 'eco give Steve 1000', player: 'Steve', offlineExecute: true },
      { command: 'give Alex golden_apple 3', player: 'Alex', offlineExecute: false },
      { command: 'give Notch diamond 1', player: 'Notch', offlineExecute: true },
    ],
    thanks: 'say Thanks for supporting the server!',
    start: (password, online) => rconGame({ flavour: 'minecraft' }, password, online),
  },
  zomboid: {
    title: 'Project Zomboid',
    preset: 'zomboid',
    online: 'alice',
    joiner: 'bob',
    absent: 'ghost',
    purchases: [
      { command: 'additem "alice" "Base.Axe"', player: 'alice', offlineExecute: false },
      { command: 'additem "alice" "Base.Plank" 10', player: 'alice', offlineExecute: true },
      { command: 'additem "bob" "Base.Hammer"', player: 'bob', offlineExecute: false },
      { command: 'additem "ghost" "Base.Axe"', player: 'ghost', offlineExecute: true },
    ],
    thanks: 'servermsg "Thanks for supporting the server!"',
    start: (password, online) => rconGame({ flavour: 'source', game: 'zomboid' }, password, online),
  },
  '7dtd': {
    title: '7 Days to Die',
    preset: '7dtd',
    online: 'Alice',
    joiner: 'Bob',
    absent: 'Ghost',
    purchases: [
      { command: 'give Alice casinoCoin 500', player: 'Alice', offlineExecute: false },
      { command: 'givexp Alice 5000', player: 'Alice', offlineExecute: true },
      { command: 'give Bob gunPistol 1', player: 'Bob', offlineExecute: false },
      { command: 'give Ghost medicalFirstAidKit 2', player: 'Ghost', offlineExecute: true },
    ],
    thanks: 'say "Thanks for supporting the server!"',
    start: sevenDaysGame,
  },
  terraria: {
    title: 'Terraria TShock',
    preset: 'terraria',
    online: 'Ann',
    joiner: 'Bob',
    absent: 'Ghost',
    purchases: [
      { command: '/give "Terra Blade" "Ann" 1', player: 'Ann', offlineExecute: false },
      { command: '/give "Healing Potion" "Ann" 30', player: 'Ann', offlineExecute: true },
      { command: '/give "Life Crystal" "Bob" 5', player: 'Bob', offlineExecute: false },
      { command: '/give Zenith "Ghost" 1', player: 'Ghost', offlineExecute: true },
    ],
    thanks: '/say Thanks for supporting the server!',
    start: (token, online) => tshockGame(token, online),
  },
  dayz: {
    title: 'DayZ',
    preset: 'dayz',
    online: 'Survivor',
    joiner: 'Smith, John',
    absent: 'Ghost',
    purchases: [
      { command: 'shop give "Survivor" AKM', player: 'Survivor', offlineExecute: false },
      { command: 'shop give "Survivor" Mag_AKM_30Rnd 3', player: 'Survivor', offlineExecute: true },
      { command: 'shop give "Smith, John" BakedBeansCan 5', player: 'Smith, John', offlineExecute: false },
      { command: 'shop give "Ghost" AKM', player: 'Ghost', offlineExecute: true },
    ],
    thanks: 'say -1 Thanks for supporting the server!',
    failurePatterns: ['is not on the server$'],
    start: dayzGame,
  },
} as const satisfies { readonly [G in DemoGameName]: DemoGame };
