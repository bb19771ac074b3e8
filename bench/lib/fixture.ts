import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startRconServer, type FakeRconServer } from '../../src/sim/rcon-server.js';
import { SIM_SERVER_ID, SIM_TOKEN, startSellerApi, type FakeSellerApi } from '../../src/sim/faults/seller-api.js';
import { startLeanApi, type LeanApi } from './lean-api.js';

/**
 * One benchmark scene: the fake Seller API and a fake Minecraft RCON server in the harness
 * process, and a porter config file (in a fresh temp folder) that points at both. The same
 * budget is given to the fake and to porter, unless a test wants them to differ.
 */

export interface Budget {
  readonly perWindow: number;
  readonly windowMs: number;
}

interface FixtureOptions {
  readonly budget?: Budget;
  readonly idleMs?: number;
  readonly refreshMs?: number;
  readonly players?: readonly string[];
  readonly logLevel?: 'info' | 'warn' | 'debug';
  /** Webhook wake-ups: porter listens here (`webhook.listen`) and verifies with this secret. */
  readonly webhook?: { readonly listen: string; readonly secret: string };
}

export interface Fixture {
  readonly api: FakeSellerApi;
  readonly game: FakeRconServer;
  readonly serverId: string;
  readonly dir: string;
  readonly configPath: string;
  /** Stops both fakes; `keepFiles` leaves the folder (config, porter.log) for a post-mortem. */
  close(keepFiles?: boolean): Promise<void>;
}

const DEFAULT_BUDGET: Budget = { perWindow: 120, windowMs: 60_000 };
/** "Lifted": far more than porter can spend in any run. */
const LIFTED_BUDGET: Budget = { perWindow: 1_000_000_000, windowMs: 60_000 };

export async function startFixture(options: FixtureOptions = {}): Promise<Fixture> {
  const budget = options.budget ?? DEFAULT_BUDGET;
  const password = randomBytes(12).toString('hex');
  const api = await startSellerApi({ budget });
  const game = await startRconServer({ password, flavour: 'minecraft', players: options.players ?? [] });
  const { dir, configPath } = writeConfig(api.url, game, password, budget, options);
  return {
    api,
    game,
    serverId: SIM_SERVER_ID,
    dir,
    configPath,
    async close(keepFiles = false) {
      await Promise.allSettled([api.close(), game.close()]);
      if (!keepFiles) rmSync(dir, { recursive: true, force: true });
    },
  };
}

interface LeanFixture {
  readonly api: LeanApi;
  readonly game: FakeRconServer;
  readonly dir: string;
  readonly configPath: string;
  close(keepFiles?: boolean): Promise<void>;
}

/** The same scene over the lean API (lean-api.ts), with the budget lifted on both sides. */
export async function startLeanFixture(options: Omit<FixtureOptions, 'budget'> = {}): Promise<LeanFixture> {
  const password = randomBytes(12).toString('hex');
  const api = await startLeanApi(SIM_TOKEN);
  const game = await startRconServer({ password, flavour: 'minecraft', players: options.players ?? [] });
  const { dir, configPath } = writeConfig(api.url, game, password, LIFTED_BUDGET, options);
  return {
    api,
    game,
    dir,
    configPath,
    async close(keepFiles = false) {
      await Promise.allSettled([api.close(), game.close()]);
      if (!keepFiles) rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A fresh temp folder with porter's config and its secrets in files, as an owner would set it up. */
function writeConfig(
  apiUrl: string,
  game: FakeRconServer,
  password: string,
  budget: Budget,
  options: FixtureOptions,
): { dir: string; configPath: string } {
  const dir = mkdtempSync(join(tmpdir(), 'porter-bench-'));
  writeFileSync(join(dir, 'api-token'), SIM_TOKEN, { mode: 0o600 });
  writeFileSync(join(dir, 'rcon-password'), password, { mode: 0o600 });
  if (options.webhook) writeFileSync(join(dir, 'webhook-secret'), options.webhook.secret, { mode: 0o600 });
  const configPath = join(dir, 'config.json');
  const players = options.refreshMs === undefined ? { preset: 'minecraft' } : { preset: 'minecraft', refreshMs: options.refreshMs };
  const config = {
    api: {
      baseUrl: apiUrl,
      tokenFile: './api-token',
      budget: { perWindow: budget.perWindow, windowMs: budget.windowMs },
      ...(options.webhook ? { webhookSecretFile: './webhook-secret' } : {}),
    },
    ...(options.webhook ? { webhook: { listen: options.webhook.listen } } : {}),
    servers: [
      {
        id: SIM_SERVER_ID,
        name: 'bench',
        executor: { type: 'rcon', host: game.host, port: game.port, passwordFile: './rcon-password' },
        players,
      },
    ],
    ...(options.idleMs === undefined ? {} : { poll: { idleMs: options.idleMs } }),
    stateDir: './state',
    log: { level: options.logLevel ?? 'info' },
  };
  writeFileSync(configPath, JSON.stringify(config, null, 2));
  return { dir, configPath };
}

/** Stops the fakes; with `--keep` the folder stays and its path is printed. */
export async function releaseFixture(
  fixture: Fixture | LeanFixture,
  context: { readonly keep: boolean; progress(message: string): void },
): Promise<void> {
  await fixture.close(context.keep);
  if (context.keep) context.progress(`  kept ${fixture.dir}`);
}
