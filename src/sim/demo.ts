import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { loadConfig } from '../config/load.js';
import { runDaemon } from '../daemon/daemon.js';
import { DEMO_GAMES, type DemoGame, type DemoGameName, type DemoGameServer } from './demo-games.js';
import { SIM_SERVER_ID, SIM_TOKEN, startSellerApi, type FakeSellerApi, type SimCommand } from './seller-api.js';

/**
 * `porter demo`: the real daemon against the simulated store and a simulated game server, with a
 * handful of purchases, one for a player who joins a few seconds in, and one for a player who never
 * comes (the game's own "no such player" answer becomes a failed delivery).
 */

export interface DemoOptions {
  readonly game: DemoGameName;
  readonly logger: (config: Awaited<ReturnType<typeof loadConfig>>) => Logger | Promise<Logger>;
  readonly keepRunning: boolean;
  readonly joinAfterMs: number;
  readonly out: NodeJS.WritableStream;
}

export async function runDemo(options: DemoOptions): Promise<number> {
  const password = randomBytes(12).toString('hex');
  const api = await startSellerApi({ idStart: 9_007_199_254_740_993n });
  const scenario: DemoGame = DEMO_GAMES[options.game];
  const game = await scenario.start(password, [scenario.online]);
  const dir = mkdtempSync(join(tmpdir(), 'porter-demo-'));
  try {
    return await demonstrate(api, game, scenario, dir, password, options);
  } finally {
    await Promise.all([api.close(), game.close()]);
    rmSync(dir, { recursive: true, force: true });
  }
}

async function demonstrate(
  api: FakeSellerApi,
  game: DemoGameServer,
  scenario: DemoGame,
  dir: string,
  password: string,
  options: DemoOptions,
): Promise<number> {
  const { out } = options;
  const configPath = join(dir, 'config.json');
  writeFileSync(join(dir, 'api-token'), SIM_TOKEN, { mode: 0o600 });
  writeFileSync(join(dir, 'game-password'), password, { mode: 0o600 });
  writeFileSync(
    configPath,
    JSON.stringify(
      {
        api: { baseUrl: api.url, tokenFile: './api-token' },
        servers: [
          {
            id: SIM_SERVER_ID,
            name: `demo-${options.game}`,
            executor: { ...game.executor, passwordFile: './game-password' },
            players: { preset: scenario.preset, refreshMs: 1000 },
            ...(scenario.failurePatterns ? { failurePatterns: scenario.failurePatterns } : {}),
          },
        ],
        poll: { idleMs: 1000 },
        stateDir: './state',
        log: { level: 'info' },
      },
      null,
      2,
    ),
  );

  const now = Date.now();
  for (const purchase of scenario.purchases) api.enqueue(SIM_SERVER_ID, purchase);
  api.enqueue(SIM_SERVER_ID, { command: scenario.thanks, offlineExecute: true, executeAt: now + 2000 });
  const total = scenario.purchases.length + 1;

  out.write(
    [
      `porter demo: a simulated store API and a simulated ${scenario.title} server run on 127.0.0.1.`,
      `  store API     ${api.url}   game server ${game.address}`,
      `  config        ${configPath}`,
      `  ${total} purchases queued; ${scenario.online} is online, ${scenario.joiner} joins in ${Math.round(options.joinAfterMs / 1000)} s, ${scenario.absent} never comes.`,
      '',
    ].join('\n'),
  );

  const stop = new AbortController();
  const joinTimer = setTimeout(() => game.join(scenario.joiner), options.joinAfterMs);
  const config = await loadConfig(configPath, {});
  const watcher = setInterval(() => {
    const settled = api.commands().filter((c) => c.status === 'EXECUTED' || c.status === 'FAILED');
    if (settled.length === total && !options.keepRunning) stop.abort();
  }, 100);
  const deadline = setTimeout(() => stop.abort(), 60_000);
  let code: number;
  try {
    code = await runDaemon({ config, logger: await options.logger(config), stopSignal: stop.signal, handleSignals: true });
  } finally {
    clearTimeout(joinTimer);
    clearInterval(watcher);
    clearTimeout(deadline);
  }
  out.write(`\n${summary(api.commands())}\n`);
  const unsettled = api.commands().filter((c) => c.status !== 'EXECUTED' && c.status !== 'FAILED').length;
  if (code !== 0) return code;
  return unsettled === 0 || options.keepRunning ? 0 : 1;
}

function summary(commands: readonly SimCommand[]): string {
  const rows = commands.map((c) => {
    const mark = c.status === 'EXECUTED' ? '✔' : c.status === 'FAILED' ? '✖' : '…';
    const detail = c.status === 'FAILED' && c.error ? `  (${c.error.slice(0, 80)})` : '';
    return `  ${mark} ${c.status.padEnd(10)} #${c.id}  ${String(c.command)}${detail}`;
  });
  return ['What the store saw:', ...rows].join('\n');
}
