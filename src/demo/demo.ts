import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { loadConfig } from '../config/load.js';
import { runDaemon } from '../daemon/daemon.js';
import { openCheckout, type Checkout } from './checkout.js';
import type { DemoGameName } from './demo-game-names.js';
import { examplePurchase, startSimStore, storeSummary, type SimStore } from './sim-store.js';
import type { SecretBook } from '../secret-book.js';

/**
 * `porter demo`: the real daemon against the simulated store and a simulated game server, with a
 * handful of purchases, one for a player who joins a few seconds in, and one for a player who never
 * comes (the game's own "no such player" answer becomes a failed delivery). With `keepRunning` it
 * goes on until stopped, and takes purchases as `porter sim` does (`porter sim buy`).
 */

export interface DemoOptions {
  readonly game: DemoGameName;
  readonly logger: (config: Awaited<ReturnType<typeof loadConfig>>) => Logger | Promise<Logger>;
  readonly keepRunning: boolean;
  readonly joinAfterMs: number;
  readonly out: NodeJS.WritableStream;
  /** With keepRunning: where `porter sim buy` finds the demo's purchases route (asked only then). */
  readonly statePath: () => string;
  /** The CLI's book of secrets, which its logger scrubs: the daemon adds the demo's to it. */
  readonly secrets?: SecretBook;
}

export async function runDemo(options: DemoOptions): Promise<number> {
  const store = await startSimStore(options.game);
  const dir = mkdtempSync(join(tmpdir(), 'porter-demo-'));
  let checkout: Checkout | undefined;
  try {
    if (options.keepRunning) checkout = await openCheckout(store, options.game, options.statePath());
    return await demonstrate(store, dir, options, checkout);
  } finally {
    await checkout?.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function demonstrate(store: SimStore, dir: string, options: DemoOptions, checkout: Checkout | undefined): Promise<number> {
  const { api, game, scenario, serverId } = store;
  const { out } = options;
  const configPath = join(dir, 'config.json');
  writeFileSync(join(dir, 'api-token'), store.token, { mode: 0o600 });
  writeFileSync(join(dir, 'game-password'), store.password, { mode: 0o600 });
  writeFileSync(
    configPath,
    JSON.stringify(
      {
        api: { baseUrl: api.url, tokenFile: './api-token' },
        servers: [
          {
            id: serverId,
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
  for (const purchase of scenario.purchases) api.enqueue(serverId, purchase);
  api.enqueue(serverId, { command: scenario.thanks, offlineExecute: true, executeAt: now + 2000 });
  const total = scenario.purchases.length + 1;

  out.write(
    [
      `porter demo: a simulated store API and a simulated ${scenario.title} server run on 127.0.0.1.`,
      `  store API     ${api.url}   game server ${game.address}`,
      `  config        ${configPath}`,
      `  ${total} purchases queued; ${scenario.online} is online, ${scenario.joiner} joins in ${Math.round(options.joinAfterMs / 1000)} s, ${scenario.absent} never comes.`,
      ...(checkout ? [`  runs until Ctrl-C; buy more from another terminal: ${buyHint(store)}`] : []),
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
  // Without --keep-running, a demo that cannot settle its purchases still ends.
  const deadline = options.keepRunning ? undefined : setTimeout(() => stop.abort(), 60_000);
  let code: number;
  try {
    code = await runDaemon({
      config,
      logger: await options.logger(config),
      stopSignal: stop.signal,
      handleSignals: true,
      ...(options.secrets && { secrets: options.secrets }),
    });
  } finally {
    clearTimeout(joinTimer);
    clearInterval(watcher);
    clearTimeout(deadline);
  }
  out.write(`\n${storeSummary(api.commands())}\n`);
  const unsettled = api.commands().filter((c) => c.status !== 'EXECUTED' && c.status !== 'FAILED').length;
  if (code !== 0) return code;
  return unsettled === 0 || options.keepRunning ? 0 : 1;
}

function buyHint(store: SimStore): string {
  const { command, player } = examplePurchase(store);
  return `porter sim buy '${command}' --player '${player}'`;
}
