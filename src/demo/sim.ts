import { once } from 'node:events';
import { openCheckout } from './checkout.js';
import type { DemoGameName } from './demo-game-names.js';
import type { QueuedPurchase } from './purchase-route.js';
import { examplePurchase, startSimStore, storeSummary, type SimStore } from './sim-store.js';

/**
 * `porter sim`: a simulated store and game server that run until stopped, for an owner to rehearse
 * `porter init`, `check`, `run` and `history` before the real store is set up. It prints what goes
 * in a config, then what happens: each purchase, each claim and report the store sees, each
 * command the game runs. `--json` prints the same as one JSON object per line, the first being
 * the config values.
 */

interface SimOptions {
  readonly game: DemoGameName;
  readonly json: boolean;
  readonly statePath: string;
  readonly out: NodeJS.WritableStream;
  /** Aborted on SIGINT/SIGTERM/SIGHUP: the sim closes its ports, removes its state file and returns. */
  readonly stop: AbortSignal;
}

/** How often the sim looks for news to print; only what is printed waits on it. */
const WATCH_MS = 100;

export async function runSim(options: SimOptions): Promise<number> {
  const store = await startSimStore(options.game);
  try {
    const print = printer(options);
    const checkout = await openCheckout(store, options.game, options.statePath, (p) => print.bought(p));
    try {
      print.banner(store, checkout.url, options);
      const watch = setInterval(() => print.news(store), WATCH_MS);
      if (!options.stop.aborted) await once(options.stop, 'abort');
      clearInterval(watch);
      print.news(store);
      print.stopped(store);
    } finally {
      await checkout.close();
    }
  } finally {
    await store.close();
  }
  return 0;
}

function shellQuote(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}

function printer(options: SimOptions) {
  const { out, json } = options;
  const ran = { seen: 0 };
  const statuses = new Map<string, string>();
  const emit = (event: Record<string, unknown>, line: string) => out.write(json ? `${JSON.stringify(event)}\n` : `${line}\n`);

  return {
    banner(store: SimStore, purchasesUrl: string, options: SimOptions): void {
      out.write(json ? bannerJson(store, purchasesUrl, options) : bannerText(store, purchasesUrl));
    },

    bought(p: QueuedPurchase): void {
      const who = p.player === undefined ? '' : ` (for ${p.player}${p.offlineExecute ? '' : ', when online'})`;
      emit({ event: 'bought', ...p }, `  bought   #${p.id}  ${p.command}${who}`);
    },

    /** New commands the game ran and new statuses the store saw since the last look. */
    news(store: SimStore): void {
      const commands = store.game.ran();
      for (const command of commands.slice(ran.seen)) emit({ event: 'ran', command }, `  game ran ${command}`);
      ran.seen = commands.length;
      for (const c of store.api.commands()) {
        if (statuses.get(c.id) === c.status) continue;
        statuses.set(c.id, c.status);
        if (c.status === 'SCHEDULED') continue;
        const error = c.status === 'FAILED' && c.error ? `  (${c.error.slice(0, 200)})` : '';
        emit({ event: 'status', id: c.id, status: c.status, error: c.error }, `  store    #${c.id}  ${c.status}${error}`);
      }
    },

    stopped(store: SimStore): void {
      emit({ event: 'stopped' }, `\n${storeSummary(store.api.commands())}`);
    },
  };
}

/** The config values, one JSON line: what `--json` prints first. */
function bannerJson(store: SimStore, purchasesUrl: string, { game, statePath }: SimOptions): string {
  const executor = store.game.executor as { type: string; host: string; port: number };
  return `${JSON.stringify({
    storeUrl: store.api.url,
    token: store.token,
    serverId: store.serverId,
    game,
    title: store.scenario.title,
    executor: { type: executor.type, host: executor.host, port: executor.port },
    address: store.game.address,
    password: store.password,
    preset: store.scenario.preset,
    ...(store.scenario.failurePatterns && { failurePatterns: store.scenario.failurePatterns }),
    online: [store.scenario.online],
    purchasesUrl,
    stateFile: statePath,
    example: examplePurchase(store),
  })}\n`;
}

/** What goes in a config and how to buy, for a person at a terminal. */
function bannerText(store: SimStore, purchasesUrl: string): string {
  const executor = store.game.executor as { type: string; host: string; port: number };
  const example = examplePurchase(store);
  const body = JSON.stringify(example);
  return [
    `porter sim: a simulated store and a simulated ${store.scenario.title} server on 127.0.0.1, until Ctrl-C.`,
    '',
    'What goes in a config (porter init asks for these):',
    `  store URL    ${store.api.url}    (api.baseUrl)`,
    `  token        ${store.token}    (api.token or api.tokenFile)`,
    `  server id    ${store.serverId}    (servers[].id)`,
    `  game server  ${store.game.address}    (servers[].executor: type "${executor.type}", host "${executor.host}", port ${executor.port})`,
    `  password     ${store.password}    (servers[].executor.password or passwordFile)`,
    `  players      ${store.scenario.online} is online    (servers[].players.preset "${store.scenario.preset}")`,
    ...(store.scenario.failurePatterns
      ? [`  failures     ${JSON.stringify(store.scenario.failurePatterns)}    (servers[].failurePatterns: the simulated mod's answers)`]
      : []),
    '',
    'Buy something, from another terminal:',
    `  porter sim buy ${shellQuote(example.command)} --player ${shellQuote(example.player)}`,
    `  curl -H 'Authorization: Bearer ${store.token}' -H 'content-type: application/json' -d ${shellQuote(body)} ${purchasesUrl}`,
    '',
    'The token and password are made up for this run and change every time; they open nothing else.',
    '',
  ].join('\n');
}
