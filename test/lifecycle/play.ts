import { systemClock } from '../../src/clock.js';
import { sendEvent } from '../peers/webhook-sender.js';
import { PorterProcess, type Exit } from '../integration/harness.js';
import { startFlood, type Flood } from './flood.js';
import type { AgonesState, LifecycleEvent, Schedule } from './schedule.js';
import { World, type ServerState, type StoreState } from './world.js';

/**
 * Plays one schedule against the real CLI: porter is spawned, every event is applied at its time
 * (a stop is followed by a new start once porter exited), and at the end the world is mended (faults
 * cleared, tokens restored, game servers up, the GameServer Ready) and porter runs once more with
 * the last configuration until every claim it owes is reported. Everything the judge needs is
 * recorded on the way.
 */

/** What porter's open-file limit is here: the Seller API pool is an eighth of it (32 connections). */
const NOFILE = '256:256';
/** How long past `shutdown.drainMs` a stop may take before it counts as a hang (node's exit, closing sockets). */
export const STOP_SLACK_MS = 5_000;
/** The settle phase's bound: every claim owed a report should be reported well within it. */
const SETTLE_BOUND_MS = 40_000;

export interface Life {
  readonly porter: PorterProcess;
  readonly spawnedAt: number;
  readonly final: boolean;
  stopAt?: number;
  exitAt?: number;
  exit?: Exit;
  /** Killed after overstaying its stop bound. */
  overstayed: boolean;
}

/** A time when no server (or those `servers` says) may send a pull. */
export interface Closure {
  readonly why: string;
  readonly from: number;
  to: number;
  readonly servers: (serverId: string) => boolean;
}

export interface SentWebhook {
  readonly store: string;
  readonly life: Life;
  readonly flood: boolean;
  readonly sentAt: number;
  answeredAt: number;
  status: number;
  error?: string;
}

export interface Purchase {
  readonly text: string;
  readonly serverId: string;
  readonly origin: number;
}

export interface Played {
  readonly world: World;
  readonly lives: Life[];
  readonly closures: Closure[];
  readonly webhooks: SentWebhook[];
  readonly purchases: Purchase[];
  /** What was played, in order, for the failure report. */
  readonly log: string[];
}

const now = () => systemClock.now();
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, Math.max(0, ms)));

/** Resolves with true when `promise` settles within `ms`, false otherwise; leaves no timer behind. */
async function within(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  try {
    return await Promise.race([promise.then(() => true as const), late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Resolves once porter's own code runs (its first line of output), or it exited: a signal before
 * that meets node still loading the bundle, where no program can have a handler yet.
 */
async function running(life: Life): Promise<void> {
  while (life.porter.stdout === '' && life.porter.stderr === '' && life.exit === undefined) await sleep(5);
}
const CLAIMING: ReadonlySet<AgonesState> = new Set(['Ready', 'Allocated', 'Reserved']);
/** What a composed seam holds off while it plays. */
const DISRUPTIVE: ReadonlySet<LifecycleEvent['kind']> = new Set([
  'stop',
  'game-down',
  'store-failing',
  'store-slow',
  'revoke',
  'reload',
  'churn',
  'remove-busy',
  'api-fault',
]);
/** How long a held backlog lets the loops claim before the gate shuts: their budget is spent by then. */
const SPEND_MS = 2_500;

export class Player {
  readonly world: World;
  readonly lives: Life[] = [];
  readonly closures: Closure[] = [];
  readonly webhooks: SentWebhook[] = [];
  readonly purchases: Purchase[] = [];
  readonly log: string[] = [];
  readonly #background: Array<Promise<unknown>> = [];
  readonly #floods = new Set<Flood>();
  #current: Life | undefined;
  #stopping: Promise<void> | undefined;
  #ended = false;
  #t0 = 0;
  #purchases = 0;
  #agonesHeldUntil = 0;
  #quietUntil = 0;

  constructor(world: World) {
    this.world = world;
  }

  get schedule(): Schedule {
    return this.world.schedule;
  }

  async play(): Promise<Played> {
    const { shape, events } = this.schedule;
    this.#t0 = now();
    if (shape.agones !== undefined && !CLAIMING.has(shape.agones)) this.#closeGate(`agones ${shape.agones}`);
    this.#spawn(false);
    this.#later(Math.max(4_000, shape.loginDelayMs + 1_000), () => {
      for (const game of this.world.games) game.setLoginDelay(0);
    });
    for (const { at, event } of events) {
      await sleep(this.#t0 + at - now());
      this.#note(at, event);
      this.#background.push(this.#apply(event).catch((error: unknown) => this.log.push(`  ! ${(error as Error).message}`)));
    }
    // A composed seam still playing is let finish.
    await sleep(Math.max(this.#t0 + shape.durationMs, this.#quietUntil) - now());
    this.#ended = true;
    await this.#stopping;
    if (this.#current) await this.#stop(this.#current, undefined);
    await Promise.allSettled(this.#background);
    await this.#mend();
    await this.#settle();
    return {
      world: this.world,
      lives: this.lives,
      closures: this.closures,
      webhooks: this.webhooks,
      purchases: this.purchases,
      log: this.log,
    };
  }

  #note(at: number, event: LifecycleEvent): void {
    this.log.push(`${String(at).padStart(5)} ms ${JSON.stringify(event)}`);
  }

  #spawn(final: boolean): Life {
    const env: NodeJS.ProcessEnv = {};
    for (const [key, value] of Object.entries(process.env)) if (!key.startsWith('PORTER_') && key !== 'NODE_TEST_CONTEXT') env[key] = value;
    const porter = new PorterProcess(['run', '-c', this.world.configPath], env, NOFILE);
    const life: Life = { porter, spawnedAt: now(), final, overstayed: false };
    this.lives.push(life);
    this.#current = life;
    void porter.exited.then((exit) => {
      life.exit = exit;
      life.exitAt ??= now();
      if (this.#current === life && life.stopAt === undefined) this.#current = undefined;
    });
    return life;
  }

  /** SIGTERM (and a second one when asked), bounded by the drain and its slack; a life that overstays is killed and judged. */
  async #stop(life: Life, secondAfterMs: number | undefined): Promise<void> {
    if (life.stopAt !== undefined || life.exit !== undefined) return;
    await running(life);
    if (life.exit !== undefined) return;
    life.stopAt = now();
    const closure = this.#closeGate('stop', () => true);
    life.porter.kill('SIGTERM');
    if (secondAfterMs !== undefined) this.#later(secondAfterMs, () => life.porter.kill('SIGTERM'));
    const bound = this.schedule.shape.drainMs + STOP_SLACK_MS;
    if (!(await within(life.porter.exited, bound + 3_000))) {
      life.overstayed = true;
      life.porter.kill('SIGKILL');
      await life.porter.exited;
    }
    life.exitAt = now();
    closure.to = life.exitAt;
    if (this.#current === life) this.#current = undefined;
  }

  /** Stops the running porter and starts it again once it exited, unless the schedule has ended. */
  #stopAndRestart(secondAfterMs: number | undefined): void {
    const life = this.#current;
    if (!life || this.#stopping) return;
    this.#stopping = this.#stop(life, secondAfterMs).then(() => {
      this.#stopping = undefined;
      if (!this.#ended) this.#spawn(false);
    });
  }

  #closeGate(why: string, servers: (serverId: string) => boolean = () => true): Closure {
    const closure: Closure = { why, from: now(), to: Number.POSITIVE_INFINITY, servers };
    this.closures.push(closure);
    return closure;
  }

  #openGate(why: RegExp): void {
    for (const closure of this.closures) if (why.test(closure.why) && closure.to === Number.POSITIVE_INFINITY) closure.to = now();
  }

  #later(ms: number, fn: () => void | Promise<void>): void {
    this.#background.push(sleep(ms).then(fn));
  }

  async #apply(event: LifecycleEvent): Promise<void> {
    const { world } = this;
    // A composed seam plays out undisturbed: what would stop porter or cut the server off waits it out (skipped).
    if (now() < this.#quietUntil && DISRUPTIVE.has(event.kind)) {
      this.log.push('        (skipped: a composed seam is playing)');
      return;
    }
    switch (event.kind) {
      case 'purchase':
        return this.#purchase(event.server, event.slowMs);
      case 'burst':
        for (let i = 0; i < event.count; i++) this.#purchase(event.server, 0);
        return;
      case 'remove-busy':
        return this.#removeBusy(event.server, event.failForMs);
      case 'held-backlog':
        return this.#heldBacklog(event.server, event.state, event.forMs);
      case 'stop':
        return this.#stopAndRestart(event.secondAfterMs);
      case 'reload':
        this.log.push(`        ${await world.change(event.change, now())}`);
        return this.#reload();
      case 'churn':
        for (let i = 0; i < event.reloads; i++) {
          this.#later(i * event.everyMs, async () => {
            if (now() < this.#quietUntil) return;
            this.log.push(`        churn: ${await world.change({ kind: 'replace-servers', count: event.replace }, now())}`);
            await this.#reload();
          });
        }
        return;
      case 'revoke':
        return this.#revoke(world.store(event.store)!);
      case 'restore':
        return this.#restore(world.store(event.store)!);
      case 'store-slow':
        return this.#storeFault(world.store(event.store)!, { delay: event.delayMs }, event.forMs);
      case 'store-failing':
        return this.#storeFault(world.store(event.store)!, event.fault, event.forMs);
      case 'api-fault': {
        const server = world.server(event.server)!;
        world.originOf(server).inject(event.route, event.fault, { serverId: server.id });
        return;
      }
      case 'agones':
        return this.#agones(event.state, false);
      case 'webhook':
        return this.#webhook(world.store(event.store)!, false);
      case 'flood':
        return this.#flood(world.store(event.store)!, event.forMs);
      case 'game-down':
        return this.#gameDown(event.game % world.games.length, event.forMs);
      case 'game-slow': {
        const game = world.game(event.game);
        game.setAnswerDelay(event.ms);
        game.setLoginDelay(event.ms);
        this.#later(event.forMs, () => {
          game.setAnswerDelay(0);
          game.setLoginDelay(0);
        });
      }
    }
  }

  /**
   * A backlog while the GameServer is Ready, long enough for the loops to spend their pull budget
   * (at `poll.idleMs` 300 ms a budget of 4 or 6 a window is spent in a second or two, and the rest
   * of the window is a wait); then the GameServer leaves the states that allow claims and stays out
   * for `forMs`. A pull decided before the budget wait must not go out after it. The schedule's
   * other state changes, stops and outages wait meanwhile.
   */
  async #heldBacklog(serverIndex: number, state: AgonesState, forMs: number): Promise<void> {
    const server = this.#idleServer(serverIndex);
    if (this.world.agones) {
      this.#quietUntil = now() + SPEND_MS + forMs;
      this.#agonesHeldUntil = now() + SPEND_MS + forMs;
      this.#agones('Ready', true);
      await this.#gameUp(server.game);
    }
    for (let i = 0; i < 8; i++) this.#purchase(this.world.servers.indexOf(server), 0);
    if (!this.world.agones) return;
    await sleep(SPEND_MS);
    this.#agones(state, true);
    this.#later(forMs, () => this.#agones('Ready', true));
  }

  /** The first server from `index` on with nothing queued or in hand on the platform (else the one at `index`): a backlog there is all quick commands. */
  #idleServer(index: number): ServerState {
    const { servers } = this.world;
    for (let i = 0; i < servers.length; i++) {
      const server = servers[(index + i) % servers.length]!;
      const busy = this.world
        .originOf(server)
        .commands()
        .some((c) => c.serverId === server.id && (c.status === 'SCHEDULED' || c.status === 'PROCESSING'));
      if (!busy) return server;
    }
    return this.world.server(index)!;
  }

  /** A slow command on a server, its reports refused for a while, and a reload removing the server once the command runs. */
  async #removeBusy(serverIndex: number, failForMs: number): Promise<void> {
    const server = this.world.server(serverIndex)!;
    const origin = this.world.originOf(server);
    this.#purchase(serverIndex, 2_000);
    for (const route of ['done', 'fail'] as const) origin.inject(route, '503', { serverId: server.id, times: Number.POSITIVE_INFINITY });
    this.#later(failForMs, () => origin.clearFaults(server.id));
    await sleep(800);
    const index = this.world.servers.indexOf(server);
    if (index < 0) return;
    this.log.push(`        ${await this.world.change({ kind: 'remove-server', server: index }, now())}`);
    await this.#reload();
  }

  #purchase(serverIndex: number, slowMs: number): void {
    const server = this.world.server(serverIndex)!;
    const n = ++this.#purchases;
    const text = `lc${this.schedule.seed}-${n}`;
    const command = slowMs > 0 ? `porter-sim delay ${slowMs} ${text}` : `say ${text}`;
    const origin = this.world.stores.get(server.store)!.origin;
    this.world.origins[origin]!.enqueue(server.id, { command });
    this.purchases.push({ text, serverId: server.id, origin });
  }

  async #reload(): Promise<void> {
    this.world.writeConfig();
    const life = this.#current;
    if (!life) return;
    // Before porter's code runs nothing can hold a SIGHUP for it; from its first line on, one is never fatal.
    await running(life);
    life.porter.kill('SIGHUP');
  }

  #revoke(store: StoreState): void {
    const unrevoked = [...this.world.stores.values()].filter((s) => !s.revoked && this.world.serversOf(s.label).length > 0);
    // Every store refused is exit 78 by design; the run keeps one store able to deliver.
    if (store.revoked || (unrevoked.length <= 1 && unrevoked.includes(store))) return;
    store.revoked = true;
    this.world.origins[store.origin]!.setToken(store.token, null);
  }

  #restore(store: StoreState): void {
    if (!store.revoked) return;
    store.revoked = false;
    this.world.origins[store.origin]!.setToken(store.token, ['commands:execute', 'servers:read']);
    // A refused store's servers start again on a reload.
    void this.#reload();
  }

  #storeFault(store: StoreState, fault: '503' | 'reset' | { delay: number }, forMs: number): void {
    const origin = this.world.origins[store.origin]!;
    const servers = this.world.serversOf(store.label);
    for (const server of servers) {
      for (const route of ['pull', 'done', 'fail'] as const)
        origin.inject(route, fault, { serverId: server.id, times: Number.POSITIVE_INFINITY });
    }
    this.#later(forMs, () => {
      for (const server of servers) origin.clearFaults(server.id);
    });
  }

  #agones(state: AgonesState, force = true): void {
    const sdk = this.world.agones;
    if (!sdk || (!force && now() < this.#agonesHeldUntil)) return;
    if (CLAIMING.has(state)) this.#openGate(/^agones /);
    else if (!this.closures.some((c) => /^agones /.test(c.why) && c.to === Number.POSITIVE_INFINITY)) this.#closeGate(`agones ${state}`);
    sdk.setState(state);
  }

  /** The game server up and answering at once, whatever the schedule did to it. */
  async #gameUp(game: number): Promise<void> {
    const sim = this.world.games[game]!;
    sim.setAnswerDelay(0);
    sim.setLoginDelay(0);
    await this.#gameBack(game);
  }

  /** The game server listening again: every downtime of it ends, an earlier overlapping one's too. */
  async #gameBack(game: number): Promise<void> {
    await this.world.games[game]!.up();
    this.#openGate(new RegExp(`^game ${game} down$`));
  }

  async #gameDown(game: number, forMs: number): Promise<void> {
    this.#closeGate(`game ${game} down`, (id) => this.world.gameOf.get(id) === game);
    await this.world.games[game]!.down();
    this.#later(forMs, () => this.#gameBack(game));
  }

  /** The listener of the porter running now, once it said it is ready; undefined otherwise. */
  #webhookUrl(store: StoreState): { url: string; life: Life } | undefined {
    const life = this.#current;
    if (!life || life.stopAt !== undefined || !this.schedule.shape.webhook) return undefined;
    const ready = life.porter.events('webhook.listening')[0];
    if (!ready) return undefined;
    const path = store.label === 'default' ? '/webhook' : `/webhook/${store.label}`;
    return { url: `http://127.0.0.1:${String(ready.port)}${path}`, life };
  }

  async #webhook(store: StoreState, flood: boolean): Promise<void> {
    const target = this.#webhookUrl(store);
    if (!target) return;
    const sent: SentWebhook = { store: store.label, life: target.life, flood, sentAt: now(), answeredAt: 0, status: 0 };
    this.webhooks.push(sent);
    const [answer] = await sendEvent(target.url, { secret: store.webhookSecret, attempts: 1 });
    sent.answeredAt = now();
    sent.status = answer?.status ?? 0;
    if (answer?.error !== undefined) sent.error = answer.error;
  }

  async #flood(store: StoreState, forMs: number): Promise<void> {
    const target = this.#webhookUrl(store);
    if (!target) return;
    const flood = await startFlood(Number(new URL(target.url).port), { idle: 200, slow: 50 });
    this.#floods.add(flood);
    this.#later(forMs, () => {
      flood.close();
      this.#floods.delete(flood);
    });
    await this.#webhook(store, true);
  }

  /** The end of the schedule: every fault gone, so what porter still owes can be reported. */
  async #mend(): Promise<void> {
    for (const flood of this.#floods) flood.close();
    for (const origin of this.world.origins) origin.clearFaults();
    for (const store of this.world.stores.values()) if (store.revoked) this.#restore(store);
    for (const game of this.world.games) {
      game.setAnswerDelay(0);
      game.setLoginDelay(0);
      await game.up();
    }
    for (const closure of this.closures) if (closure.to === Number.POSITIVE_INFINITY) closure.to = now();
    this.#agones('Ready', true);
    this.world.writeConfig();
  }

  /** porter once more, with the last configuration, until it reported every claim it owes (or the bound). */
  async #settle(): Promise<void> {
    const life = this.#spawn(true);
    const deadline = now() + SETTLE_BOUND_MS;
    while (now() < deadline && life.exit === undefined && life.porter.events('porter.started').length === 0) await sleep(50);
    while (now() < deadline && life.exit === undefined && (owed(this.world).length > 0 || undelivered(this.world) > 0)) await sleep(100);
    await this.#stop(life, undefined);
  }
}

/** Commands whose claiming pull a fault held back or cut off: the claim gap porter cannot close (docs/design.md#the-claim-gap). */
function lostClaims(origin: World['origins'][number]): Set<string | undefined> {
  return new Set(
    origin.requests.filter((r) => r.route === 'pull' && r.fault !== undefined && r.commandId !== undefined).map((r) => r.commandId),
  );
}

/**
 * Claims still PROCESSING on the platform that porter must report: their server, or the store they
 * were claimed for, is configured. A lost claim (above) is left out.
 */
export function owed(world: World): Array<{ id: string; serverId: string; command: unknown; claimedAt: number | undefined }> {
  const configured = new Set(world.servers.map((s) => s.id));
  return world.origins.flatMap((origin) => {
    const lost = lostClaims(origin);
    return origin
      .commands()
      .filter((c) => c.status === 'PROCESSING' && !lost.has(c.id))
      .filter((c) => configured.has(c.serverId) || claimedForConfiguredStore(world, c.serverId, c.claimedAt));
  });
}

/** Commands of configured servers still to be handed out, but for those of a server a lost claim blocks on the platform. */
function undelivered(world: World): number {
  const configured = new Set(world.servers.map((s) => s.id));
  return world.origins.reduce((n, origin) => {
    const lost = lostClaims(origin);
    const commands = origin.commands();
    const blocked = new Set(commands.filter((c) => c.status === 'PROCESSING' && lost.has(c.id)).map((c) => c.serverId));
    return n + commands.filter((c) => configured.has(c.serverId) && !blocked.has(c.serverId) && c.status === 'SCHEDULED').length;
  }, 0);
}

/** Whether every store the server belonged to around the claim is still configured (a removed store's claims may stay). */
function claimedForConfiguredStore(world: World, serverId: string, claimedAt: number | undefined): boolean {
  const history = world.storeHistory.get(serverId) ?? [];
  const at = claimedAt ?? 0;
  const around = history.filter((h, i) => h.from <= at + 2_000 && (history[i + 1]?.from ?? Number.POSITIVE_INFINITY) >= at - 2_000);
  return around.length > 0 && around.every((h) => world.stores.has(h.store));
}
