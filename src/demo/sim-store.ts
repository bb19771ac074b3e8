import { randomBytes } from 'node:crypto';
import type { DemoGameName } from './demo-game-names.js';
import { demoGame, type DemoGame, type DemoGameServer } from './demo-games.js';
import { PLAYER_PLACEHOLDER } from './sim-purchase.js';
import { SIM_SERVER_ID, startSellerApi, type FakeSellerApi, type SimCommand } from '../sim/seller-api.js';

/**
 * A simulated store and one simulated game server, as `porter demo` and `porter sim` run them:
 * a fresh token and game password each run (printed by `porter sim`; not real secrets, but never
 * written where other users could read them), and ids above 2^53 so a rehearsal shows they survive.
 */

export interface SimStore {
  readonly api: FakeSellerApi;
  readonly game: DemoGameServer;
  readonly scenario: DemoGame;
  readonly serverId: string;
  readonly token: string;
  readonly password: string;
  close(): Promise<void>;
}

export async function startSimStore(name: DemoGameName): Promise<SimStore> {
  const token = `gci_sim_${randomBytes(16).toString('hex')}`;
  const password = randomBytes(12).toString('hex');
  const scenario: DemoGame = demoGame(name);
  const game = await scenario.start(password, [scenario.online]);
  const { type, host, port } = game.executor as { type: string; host: string; port: number };
  let api: FakeSellerApi;
  try {
    api = await startSellerApi({
      idStart: 9_007_199_254_740_993n,
      tokens: { [token]: ['commands:execute', 'servers:read'] },
      // GET /v1/seller/servers lists it as the store would, with its RCON address when it has one.
      servers: [
        { id: SIM_SERVER_ID, name: `sim-${name}`, ...(type === 'rcon' ? { type: 'RCON', rcon: { host, port } } : { type: 'PLUGIN' }) },
      ],
    });
  } catch (error) {
    await game.close();
    throw error;
  }
  return {
    api,
    game,
    scenario,
    serverId: SIM_SERVER_ID,
    token,
    password,
    close: async () => {
      await Promise.all([api.close(), game.close()]);
    },
  };
}

/** What the store saw, one line per purchase: the end of a demo or a sim. */
export function storeSummary(commands: readonly SimCommand[]): string {
  const rows = commands.map((c) => {
    const mark = c.status === 'EXECUTED' ? '✔' : c.status === 'FAILED' ? '✖' : '…';
    const detail = c.status === 'FAILED' && c.error ? `  (${c.error.slice(0, 80)})` : '';
    return `  ${mark} ${c.status.padEnd(10)} #${c.id}  ${String(c.command)}${detail}`;
  });
  return ['What the store saw:', ...rows].join('\n');
}

/** An example purchase for the game: its first sample, with `{player}` where the online player's name was. */
export function examplePurchase(store: SimStore): { command: string; player: string } {
  const { purchases, online } = store.scenario;
  const sample = purchases.find((p) => p.player === online) ?? purchases[0]!;
  return { command: sample.command.split(online).join(PLAYER_PLACEHOLDER), player: online };
}
