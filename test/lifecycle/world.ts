import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startAgonesSdk } from '../../src/sim/agones-sdk.js';
import { startRconServer, type FakeRconServer } from '../../src/sim/faults/rcon-server.js';
import { startSellerApi, type FakeSellerApi } from '../../src/sim/faults/seller-api.js';
import { MAX_SECRET_LENGTH } from '../../src/config/secrets.js';
import type { Change, Schedule, Shape } from './schedule.js';

/**
 * The world of one lifecycle run: Seller APIs (one per origin, each serving every store there),
 * game servers (one RCON server per store, shared by its servers), the Agones SDK, and the
 * configuration porter reads, with its secret files. Reloads change the configuration here; the
 * world keeps, for the judge, which store every server belonged to and when.
 */

const SCOPES = ['commands:execute', 'servers:read'];
/** Server ids the Seller APIs know: the configured ones and every one a reload may add. */
const ID_POOL = 120;

export interface StoreState {
  /** "default" for the store of `api`. */
  readonly label: string;
  readonly origin: number;
  readonly token: string;
  readonly webhookSecret: string;
  /** Which game server its servers are added on. */
  readonly game: number;
  revoked: boolean;
}

export interface ServerState {
  readonly id: string;
  readonly name: string;
  store: string;
  readonly game: number;
}

type AgonesSdk = Awaited<ReturnType<typeof startAgonesSdk>>;

export class World {
  readonly dir = mkdtempSync(join(tmpdir(), 'porter-lifecycle-'));
  readonly configPath = join(this.dir, 'config.json');
  readonly stores = new Map<string, StoreState>();
  servers: ServerState[] = [];
  /** Every store a server has belonged to, from when (epoch ms). */
  readonly storeHistory = new Map<string, Array<{ readonly from: number; readonly store: string }>>();
  /** Stores removed from the configuration, and when. */
  readonly removedStores = new Map<string, number>();
  readonly #ids: string[];
  #nextId = 0;
  #nextStore = 1;
  #nextName = 1;

  private constructor(
    readonly schedule: Schedule,
    readonly origins: readonly FakeSellerApi[],
    readonly games: FakeRconServer[],
    readonly agones: AgonesSdk | undefined,
    ids: string[],
  ) {
    this.#ids = ids;
  }

  static async create(schedule: Schedule): Promise<World> {
    const { shape, seed } = schedule;
    const ids = Array.from({ length: ID_POOL }, (_, i) => uuidOf(seed, i));
    const tokens = shape.stores.map((_, i) => tokenOf(seed, i));
    const extraTokens = Array.from({ length: 8 }, (_, i) => tokenOf(seed, 100 + i));
    const origins = await Promise.all(
      Array.from({ length: shape.origins }, () =>
        startSellerApi({
          tokens: Object.fromEntries([...tokens, ...extraTokens].map((token) => [token, SCOPES])),
          servers: ids,
          budget: shape.budget,
        }),
      ),
    );
    const games = await Promise.all(shape.stores.map((_, i) => startGame(seed, i)));
    const agones = shape.agones === undefined ? undefined : await startAgonesSdk({ state: shape.agones });
    const world = new World(schedule, origins, games, agones, ids);
    world.#extraTokens = [...extraTokens];
    world.#allTokens = [...tokens, ...extraTokens];
    shape.stores.forEach((store, i) => {
      const label = i === 0 ? 'default' : `s${world.#nextStore++}`;
      world.#addStore(label, store.origin, tokens[i]!, i);
      for (let n = 0; n < store.servers; n++) world.#addServer(label, 0);
    });
    for (const game of games) game.setLoginDelay(shape.loginDelayMs);
    world.writeConfig();
    return world;
  }

  /** Tokens no store has yet, for stores a reload adds. */
  #extraTokens: string[] = [];
  #allTokens: string[] = [];
  readonly #webhookSecrets = new Set<string>();
  /** The game server of every server ever configured. */
  readonly gameOf = new Map<string, number>();

  get shape(): Shape {
    return this.schedule.shape;
  }

  /** Every secret porter is given: none may appear in its output. */
  secrets(): string[] {
    return [...this.#webhookSecrets, ...this.#allTokens, ...this.games.map((_, i) => gamePassword(this.schedule.seed, i))];
  }

  store(index: number): StoreState | undefined {
    const all = [...this.stores.values()];
    return all.length === 0 ? undefined : all[index % all.length];
  }

  server(index: number): ServerState | undefined {
    return this.servers.length === 0 ? undefined : this.servers[index % this.servers.length];
  }

  game(index: number): FakeRconServer {
    return this.games[index % this.games.length]!;
  }

  originOf(server: ServerState): FakeSellerApi {
    return this.origins[this.stores.get(server.store)!.origin]!;
  }

  serversOf(store: string): ServerState[] {
    return this.servers.filter((s) => s.store === store);
  }

  /** Applies a reload's change to the configuration (or nothing, when it does not fit this world); says what it did. */
  async change(change: Change | undefined, at: number): Promise<string> {
    if (change === undefined) return 'nothing changed';
    switch (change.kind) {
      case 'add-server': {
        const store = this.store(change.store)!;
        const added = this.#addServer(store.label, at);
        return added ? `added ${added.name} to ${store.label}` : 'no id left';
      }
      case 'remove-server': {
        const server = this.server(change.server);
        if (!server || !this.#deliverable(this.servers.filter((s) => s !== server))) return 'nothing removed (last server able to deliver)';
        this.servers = this.servers.filter((s) => s !== server);
        return `removed ${server.name}`;
      }
      case 'move-server': {
        const server = this.server(change.server);
        const from = server && this.stores.get(server.store);
        const targets = [...this.stores.values()].filter((s) => from && s.origin === from.origin && s.label !== from.label);
        const to = targets[change.store % Math.max(1, targets.length)];
        if (!server || !to || !this.#deliverable(this.servers.map((s) => (s === server ? { ...s, store: to.label } : s))))
          return 'nothing moved';
        server.store = to.label;
        this.storeHistory.get(server.id)!.push({ from: at, store: to.label });
        return `moved ${server.name} to ${to.label}`;
      }
      case 'add-store': {
        if (this.#extraTokens.length === 0 || this.#nextStore > 6) return 'no store added';
        const label = `s${this.#nextStore++}`;
        const game = await startGame(this.schedule.seed, this.games.length);
        this.games.push(game);
        const token = this.#extraTokens.shift()!;
        this.#addStore(label, change.origin % this.origins.length, token, this.games.length - 1);
        for (let n = 0; n < change.servers; n++) this.#addServer(label, at);
        return `added store ${label}`;
      }
      case 'replace-servers':
        return this.#replace(change.count, at);
      case 'remove-store': {
        const named = [...this.stores.values()].filter((s) => s.label !== 'default');
        const store = named[change.store % Math.max(1, named.length)];
        if (!store || !this.#deliverable(this.servers.filter((s) => s.store !== store.label))) return 'no store removed';
        this.stores.delete(store.label);
        this.removedStores.set(store.label, at);
        this.servers = this.servers.filter((s) => s.store !== store.label);
        return `removed store ${store.label}`;
      }
    }
  }

  /** Replaces up to `count` servers, the longest configured first, each by a new id on the same store; says which. */
  #replace(count: number, at: number): string {
    const replaced: string[] = [];
    for (const server of [...this.servers]) {
      if (replaced.length >= count) break;
      if (!this.#deliverable(this.servers.filter((s) => s !== server))) continue;
      const added = this.#addServer(server.store, at);
      if (!added) break;
      this.servers = this.servers.filter((s) => s !== server);
      replaced.push(`${server.name} by ${added.name}`);
    }
    return replaced.length > 0 ? `replaced ${replaced.join(', ')}` : 'nothing replaced (no id left)';
  }

  /** Every store refused is exit 78 by design: a run keeps one server whose store's token is good. */
  #deliverable(servers: readonly ServerState[]): boolean {
    return servers.some((s) => !this.stores.get(s.store)!.revoked);
  }

  #addStore(label: string, origin: number, token: string, game: number): void {
    const webhookSecret = `whsec_${createHash('sha256').update(`${this.schedule.seed}:${label}:webhook`).digest('base64')}`;
    this.stores.set(label, { label, origin, token, webhookSecret, game, revoked: false });
    this.#webhookSecrets.add(webhookSecret);
    this.removedStores.delete(label);
    writeAtomically(join(this.dir, `token-${label}`), `${token}\n`);
    writeAtomically(join(this.dir, `webhook-${label}`), `${webhookSecret}\n`);
  }

  #addServer(store: string, at: number): ServerState | undefined {
    const id = this.#ids[this.#nextId++];
    if (id === undefined) return undefined;
    const server = { id, name: `srv${this.#nextName++}`, store, game: this.stores.get(store)!.game };
    this.servers.push(server);
    this.storeHistory.set(id, [{ from: at, store }]);
    this.gameOf.set(id, server.game);
    return server;
  }

  /** Writes the configuration porter reads (at start and on SIGHUP). */
  writeConfig(): void {
    const { shape } = this;
    const api = (store: StoreState) => ({
      baseUrl: this.origins[store.origin]!.url,
      tokenFile: `./token-${store.label}`,
      timeoutMs: shape.apiTimeoutMs,
      budget: shape.budget,
      ...(shape.webhook && { webhookSecretFile: `./webhook-${store.label}` }),
    });
    const named = [...this.stores.values()].filter((s) => s.label !== 'default');
    const config = {
      api: api(this.stores.get('default')!),
      ...(named.length > 0 && { stores: Object.fromEntries(named.map((s) => [s.label, api(s)])) }),
      servers: this.servers.map((server) => {
        const game = this.games[server.game]!;
        return {
          id: server.id,
          name: server.name,
          ...(server.store !== 'default' && { store: server.store }),
          executor: {
            type: 'rcon',
            host: game.host,
            port: game.port,
            passwordFile: `./rcon-${server.game}`,
            timeoutMs: 10_000,
            connectTimeoutMs: 5_000,
          },
          players: { preset: 'minecraft', refreshMs: 300 },
          notSentRetryMs: 3_000,
        };
      }),
      poll: { idleMs: 300 },
      stateDir: './state',
      log: { level: 'info', pretty: false },
      shutdown: { drainMs: shape.drainMs },
      ...(shape.webhook && { webhook: { listen: '127.0.0.1:0' } }),
      ...(this.agones && { agones: { sdkHttpPort: this.agones.port } }),
    };
    this.games.forEach((_, i) => writeAtomically(join(this.dir, `rcon-${i}`), `${gamePassword(this.schedule.seed, i)}\n`));
    writeAtomically(this.configPath, JSON.stringify(config, null, 2));
  }

  async close(): Promise<void> {
    await Promise.allSettled([...this.origins.map((o) => o.close()), ...this.games.map((g) => g.close()), this.agones?.close()]);
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/**
 * As an editor saves (a new file renamed over the old one): porter reading its configuration at
 * that moment finds the old or the new file, never one cut short. Unchanged files are left alone.
 */
function writeAtomically(path: string, text: string): void {
  if (existsSync(path) && readFileSync(path, 'utf8') === text) return;
  writeFileSync(`${path}.tmp`, text, { mode: 0o600 });
  renameSync(`${path}.tmp`, path);
}

/**
 * One seed in three plays with huge secrets, as long as each can still work: API tokens of
 * MAX_SECRET_LENGTH characters, game passwords of 1400 (a Minecraft RCON packet carries 1446
 * bytes). Taken from the seed, not drawn in the schedule, so every seed's schedule stays the one
 * that found its defect; a failing seed says whether its secrets were huge.
 */
export function hugeSecrets(seed: number): boolean {
  return seed % 3 === 0;
}

/** `length` hex characters, the same for the same `what`. */
function hexOf(what: string, length: number): string {
  let hex = '';
  for (let n = 0; hex.length < length; n++) hex += createHash('sha256').update(`${what}:${n}`).digest('hex');
  return hex.slice(0, length);
}

function gamePassword(seed: number, i: number): string {
  return `rcon-${hexOf(`${seed}:game:${i}`, hugeSecrets(seed) ? 1400 - 5 : 16)}`;
}

function startGame(seed: number, i: number): Promise<FakeRconServer> {
  return startRconServer({ password: gamePassword(seed, i), flavour: 'minecraft', players: ['Steve'] });
}

function tokenOf(seed: number, i: number): string {
  return `gci_lc_${hexOf(`${seed}:token:${i}`, hugeSecrets(seed) ? MAX_SECRET_LENGTH - 7 : 24)}`;
}

function uuidOf(seed: number, i: number): string {
  const hex = createHash('sha256').update(`${seed}:server:${i}`).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-8${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}
