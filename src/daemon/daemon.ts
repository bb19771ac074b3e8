import { serverLabel } from '../config/server-label.js';
import type { Logger } from 'pino';
import { MAX_TIMER_MS, systemClock, type Clock } from '../clock.js';
import type { Config, ResolvedServer } from '../config/schema.js';
import { Journal } from '../delivery/journal/journal.js';
import { DeliveryHistory } from '../delivery/history/history.js';
import { lockStateDir, type StateLock } from '../delivery/state/state-lock.js';
import { allGates } from '../delivery/claim-gates.js';
import { exitCodeOf, isConfigurationError, messageOf } from '../errors.js';
import { configSecrets } from '../config/secrets.js';
import type { AgonesWiring } from '../agones/wiring.js';
import type { HealthWiring } from '../health/wire.js';
import { ReloadQueue } from '../reload-queue.js';
import { SecretBook } from '../secret-book.js';
import { Fleet } from './fleet.js';
import { guardOpenFiles, openFileLimit } from '../net/open-files.js';
import { openFilesWarning } from './open-files-need.js';
import { describePlan, effectiveConfig, planReload } from './reload-plan.js';
import { onReloadSignal, onStopSignals } from './signals.js';
import { webhookWiring, type WebhookWiring } from './webhook-wiring.js';
import { DaemonLifecycle } from './lifecycle.js';

interface DaemonOptions {
  readonly config: Config;
  readonly logger: Logger;
  readonly clock?: Clock;
  /** Aborting it is the same as SIGTERM (for `porter demo` and in-process tests). */
  readonly stopSignal?: AbortSignal;
  /** Install SIGTERM/SIGINT (stop) and SIGHUP (reload) handlers (the CLI does; embedders may not want to). */
  readonly handleSignals?: boolean;
  /**
   * The process's book of secrets (the CLI's, which also scrubs its log); the daemon adds those of
   * every configuration it runs, and the API clients every token they read again. Default: a new book.
   */
  readonly secrets?: SecretBook;
  /**
   * Loads the configuration again (SIGHUP). Rejects with a ConfigError when the files are
   * invalid; porter then keeps running as it was. Without it a SIGHUP is logged and ignored.
   */
  readonly reload?: () => Promise<Config>;
  /**
   * Called once the daemon's own signal handlers are in place: which signals came earlier, while
   * porter loaded. A stop then stops the daemon before it connects or claims anything; a SIGHUP
   * reloads once it runs.
   */
  readonly earlySignals?: () => { readonly hangup: boolean; readonly stop: boolean };
  /** The Agones SDK's HTTP port on localhost, inside a GameServer pod (docs/design.md#agones). */
  readonly agonesPort?: number;
  /**
   * Another porter took over the state directory (this one's lease went unrefreshed: frozen, or
   * its disk failed): called right after the state.lock.lost line, and expected not to return
   * (the CLI exits 78 there, touching nothing in stateDir again). Without it the daemon stops as
   * fast as it can, abandoning the command in hand and writing nothing more to the journal itself.
   */
  readonly onLockLost?: () => void;
}

/**
 * Runs every configured server's delivery loop until stopped, applying reloads on SIGHUP.
 * Resolves with the process exit code (docs/design.md#cli-and-exit-codes): 0 after a clean stop,
 * 78 on a configuration or credential error, 1 otherwise.
 */
export async function runDaemon(options: DaemonOptions): Promise<number> {
  const daemon = await Daemon.open(options);
  const removeStopHandlers = options.handleSignals ? onStopSignals(daemon.requestStop) : () => {};
  const removeReloadHandler = options.handleSignals ? onReloadSignal(daemon.requestReload) : () => {};
  const early = options.earlySignals?.() ?? { hangup: false, stop: false };
  if (early.stop) daemon.requestStop();
  else if (early.hangup) daemon.requestReload();
  options.stopSignal?.addEventListener('abort', daemon.requestStop, { once: true });
  if (options.stopSignal?.aborted) daemon.requestStop();
  try {
    await daemon.serve();
  } catch (error) {
    daemon.fail(error);
  } finally {
    options.stopSignal?.removeEventListener('abort', daemon.requestStop);
    removeStopHandlers();
    removeReloadHandler();
    await daemon.close();
  }
  return daemon.stopped();
}

/** One running daemon: its parts, how it stops and with which exit code, and how a reload is applied. */
class Daemon {
  readonly #options: DaemonOptions;
  readonly #logger: Logger;
  readonly #clock: Clock;
  readonly #lock: StateLock;
  /** Another porter holds the state directory now: nothing of this one's may be written there. */
  #lockLost = false;
  readonly #journal: Journal;
  // Every secret of every configuration this daemon has run, whoever started it, plus any the caller knows besides.
  readonly #secrets: SecretBook;
  readonly #history: DeliveryHistory;
  readonly #reloads: ReloadQueue;
  /** The state, and the stop: every move and every stop, whatever its cause, goes through it. */
  readonly #lifecycle: DaemonLifecycle;
  #config: Config;
  #exitCode = 0;
  // Set by #wire(); a stop may be asked for before it is (Agones' Shutdown while the health endpoint loads).
  #fleet!: Fleet;
  #health: HealthWiring | undefined;
  #agones: AgonesWiring | undefined;
  #webhook: WebhookWiring | undefined;
  /** Counts what a reload applied to the listener, so a slower preview of an older file cannot undo it. */
  #listenerVersion = 0;

  static async open(options: DaemonOptions): Promise<Daemon> {
    const { config, logger } = options;
    // The lease may be lost any time after the lock is taken: it tells the daemon once there is one.
    const told: { daemon?: Daemon } = {};
    const lock = await lockStateDir(config.stateDir, {
      logger,
      clock: options.clock ?? systemClock,
      onLost: (reason) => {
        if (told.daemon) told.daemon.#onLockLost(reason);
      },
      onLeaseFailed: (error) =>
        logger.error(
          { event: 'state.lock.refresh.failed', err: error.message },
          `cannot refresh the lease in ${config.stateDir}/porter.lock: claiming nothing until a refresh succeeds (check the state directory's disk and permissions); another porter may take the directory over once the lease is stale`,
        ),
    });
    const daemon = new Daemon(options, lock);
    told.daemon = daemon;
    await daemon.#wire();
    return daemon;
  }

  private constructor(options: DaemonOptions, lock: StateLock) {
    const { config, logger } = options;
    const clock = options.clock ?? systemClock;
    this.#options = options;
    this.#logger = logger;
    this.#clock = clock;
    this.#config = config;
    this.#lock = lock;
    // The fleet is wired after the lifecycle: a stop that comes first (Agones' Shutdown while the
    // health endpoint loads) reaches the runners as they are built (Fleet#build).
    const fleet = (): Fleet | undefined => this.#fleet;
    this.#lifecycle = new DaemonLifecycle(logger, {
      shutdownMs: () => this.#config.shutdown.drainMs,
      actions: { drain: (drainMs) => fleet()?.requestStop(drainMs), force: () => fleet()?.abandon() },
    });
    this.#journal = new Journal(config.stateDir, { now: () => clock.now() });
    this.#secrets = options.secrets ?? new SecretBook();
    this.#secrets.add(...configSecrets(config));
    const scrub = this.#secrets.scrub;
    this.#history = new DeliveryHistory({ stateDir: config.stateDir, maxBytes: config.history.maxBytes, scrub, clock, logger });
    this.#reloads = new ReloadQueue(
      () =>
        this.#reload().catch((error: unknown) => {
          logger.error(
            { event: 'reload.partial', err: error },
            'configuration reload failed part way: servers not restarted yet stay stopped until the next reload',
          );
        }),
      () => this.#lifecycle.stopping,
    );
  }

  async #wire(): Promise<void> {
    const config = this.#config;
    const [logger, clock, secrets] = [this.#logger, this.#clock, this.#secrets];
    // prom-client is loaded only when the endpoint is configured.
    this.#health = config.health ? (await import('../health/wire.js')).healthWiring(config, { logger, clock, secrets }) : undefined;
    const { agonesPort } = this.#options;
    this.#agones =
      agonesPort === undefined
        ? undefined
        : (await import('../agones/wiring.js')).startAgones({ port: agonesPort, clock, logger, onShutdown: () => this.requestStop() });
    const observer = this.#health?.daemonOptions.observer;
    const fleet = new Fleet(config, {
      journal: this.#journal,
      history: this.#history,
      clock,
      logger,
      secrets,
      ...(observer ? { observer } : {}),
      gate: allGates([this.#lock.lease, this.#agones?.gate]),
      onFatal: (error, server, fromReload) => this.#onFatal(error, server, fromReload),
      onStoreRefused: (error, _store, everyServer) => this.#onStoreRefused(error, everyServer),
    });
    this.#fleet = fleet;
    this.#webhook = webhookWiring(config, {
      logger,
      clock,
      wake: (store) => fleet.wakeStore(store),
      ...(this.#health && { onOutcome: this.#health.webhookEvent }),
    });
  }

  /**
   * Starts every server, then waits for the stop and drains (docs/design.md#lifecycle). A stop may
   * come at any step: each step after it is skipped, the logins under way are abandoned, and
   * the drain follows at once.
   */
  async serve(): Promise<void> {
    const [config, logger, fleet, journal] = [this.#config, this.#logger, this.#fleet, this.#journal];
    const openFiles = openFilesWarning(config, openFileLimit());
    if (openFiles) {
      logger.warn({ event: 'limits.openfiles' }, openFiles);
      // Game-server connections then leave the last few descriptors to the journal and the API.
      guardOpenFiles();
    }
    const initial = await fleet.assemble();
    // Before any claim: a health port already in use must stop porter while it holds nothing.
    await this.#health?.daemonOptions.onStarted({
      get servers() {
        return fleet.parts;
      },
      get stores() {
        return fleet.stores();
      },
      unreportable: () => fleet.unreportable(),
      state: () => this.#lifecycle.state,
      journal,
      history: this.#history,
    });
    if (!this.#lifecycle.stopping) await this.#webhook?.start();
    // A wrong password at start stops porter before anything is claimed (exit 78). A stop
    // abandons the logins: they may wait on a game server still loading its world.
    if (this.#lifecycle.advance('logging-in')) {
      await Promise.race([Promise.all(initial.map((runner) => runner.connect())), this.#lifecycle.stopRequested]);
    }
    // Each step is skipped once a stop came: porter then drains what it holds (nothing is claimed yet).
    if (this.#lifecycle.advance('running')) {
      logger.info(
        { event: 'porter.started', servers: initial.map((r) => serverLabel(r.parts.server)), stateDir: config.stateDir },
        'porter started',
      );
      for (const runner of initial) fleet.start(runner, false);
      fleet.settleLeftovers();
      warnUnreportable(fleet, logger);
    }
    this.#reloads.open();
    // A porter with no server to run (a shard that holds none) waits for a reload or a stop all
    // the same: signal handlers alone do not keep Node's event loop alive.
    const keepAlive = setInterval(() => {}, MAX_TIMER_MS);
    await this.#lifecycle.stopRequested;
    clearInterval(keepAlive);
    // A reload under way is bounded too: its logins are abandoned, the servers it stops drain as these do.
    await this.#reloads.idle();
    await fleet.stop(this.#lifecycle.drainMs);
  }

  /** A stop signal, from any cause: the lifecycle decides what it does (docs/design.md#the-daemon). */
  readonly requestStop = (): void => this.#lifecycle.stop();

  readonly requestReload = (): void => {
    // A SIGHUP while draining is ignored (docs/design.md#the-daemon).
    if (this.#lifecycle.stopping) return;
    if (!this.#options.reload) {
      this.#logger.warn({ event: 'reload.nofile' }, 'SIGHUP: this porter has no configuration file to read again; nothing changed');
      return;
    }
    this.#reloads.request();
    void this.#previewForListener();
  };

  /** What a reload decided is what the listener serves, whatever a preview of the file said before. */
  #listenerFollows(config: Config): void {
    this.#listenerVersion++;
    this.#webhook?.useConfig(config);
  }

  /**
   * The listener follows the plan, not the logins, including the logins before it: a reload is
   * applied only once porter runs (and after a reload under way), while a SIGHUP during start-up's
   * logins or another reload's is the owner saying the file now configures a store. So the file is
   * read and planned at once for the listener alone; the queued reload reads it again and applies
   * it. A preview overtaken by a reload that applied a newer file is dropped.
   */
  async #previewForListener(): Promise<void> {
    const webhook = this.#webhook;
    if (webhook === undefined) return;
    const seen = this.#listenerVersion;
    let next: Config;
    try {
      next = await this.#options.reload!();
    } catch {
      return; // the queued reload reads it again and says what is wrong with it
    }
    const plan = planReload(this.#config, next);
    if (plan.rejected !== undefined || seen !== this.#listenerVersion || this.#lifecycle.stopping) return;
    this.#secrets.add(...configSecrets(next));
    webhook.useConfig(effectiveConfig(this.#config, next));
  }

  /** An error that ended serve(): logged, and its exit code kept. */
  fail(error: unknown): void {
    this.#exitCode = Math.max(this.#exitCode, exitCodeOf(error));
    this.#logger.error({ event: 'porter.fatal', err: error }, fatalMessage(error));
  }

  /** A loop's fatal error stops porter; when a reload started that server and others run, only that server. */
  #onFatal(error: unknown, server: ResolvedServer, fromReload: boolean): void {
    if (fromReload && isConfigurationError(error) && this.#fleet.size > 1) {
      this.#logger.error(
        { event: 'server.stopped', err: error, server: serverLabel(server) },
        'this server stopped: fix its settings and reload (systemctl reload porter, or kill -HUP); the other servers go on',
      );
      return;
    }
    this.#exitCode = Math.max(this.#exitCode, exitCodeOf(error));
    this.#logger.error({ event: 'server.fatal', err: error, server: serverLabel(server) }, fatalMessage(error));
    this.requestStop();
  }

  /** A store's token was refused and its servers stop; when no store is left to deliver for, porter stops with 78. */
  #onStoreRefused(error: unknown, everyServer: boolean): void {
    if (!everyServer) return;
    this.#exitCode = Math.max(this.#exitCode, exitCodeOf(error));
    const stores = this.#fleet
      .stores()
      .filter((store) => store.refused)
      .map((store) => store.name);
    this.#logger.error({ event: 'store.fatal', stores }, fatalMessage(error));
    // Already stopping (SIGTERM came first): a second stop would abandon the command in hand.
    this.#lifecycle.stopOnce();
  }

  /** Runs only while porter runs (the queue skips it once stopping); a stop during it leaves porter draining. */
  async #reload(): Promise<void> {
    if (!this.#lifecycle.advance('reloading')) return;
    try {
      await this.#applyReload();
    } finally {
      // Refused only when a stop came during the reload (any other refusal throws): porter stays
      // draining, and serve() drains what the reload left.
      this.#lifecycle.advance('running');
    }
  }

  async #applyReload(): Promise<void> {
    const logger = this.#logger;
    // Whether or not the configuration loads: a renewed certificate is what a SIGHUP often means.
    await this.#webhook?.reloadTls();
    let next: Config;
    try {
      next = await this.#options.reload!();
    } catch (error) {
      logger.error(
        { event: 'reload.invalid', err: messageOf(error) },
        'configuration not reloaded: the new files are invalid; porter goes on with the running configuration',
      );
      this.#listenerFollows(this.#config);
      return;
    }
    const running = this.#config;
    const plan = planReload(running, next);
    if (plan.rejected !== undefined) {
      logger.error({ event: 'reload.refused' }, `configuration not reloaded: ${plan.rejected}`);
      this.#listenerFollows(this.#config);
      return;
    }
    this.#secrets.add(...configSecrets(next));
    for (const warning of next.warnings ?? []) logger.warn({ event: 'config.warning' }, warning);
    for (const setting of plan.deferred)
      logger.warn({ event: 'reload.deferred' }, `configuration reloaded, but ${setting} changes only when porter restarts`);
    const effective = effectiveConfig(running, next);
    // The listener follows the plan, not the logins (docs/design.md#webhook-wake-ups): a store the
    // reload adds is verified from now on, and its servers pull at once when their loops start.
    this.#listenerFollows(effective);
    const applied = await this.#fleet.apply(plan, effective, this.#lifecycle.stopSignal);
    this.#config = applied.config;
    warnUnreportable(this.#fleet, logger);
    logger.info(
      { event: 'reload.done', servers: this.#fleet.parts.map((parts) => serverLabel(parts.server)), refused: applied.refused },
      `configuration reloaded: ${describePlan(plan, running)}`,
    );
  }

  /**
   * porter.lock names another porter: it judged this one gone (its lease went unrefreshed for a
   * whole watch period: a freeze, a stalled disk) and now owns the journal. Writing it again could
   * wipe the other's claims, so this one stops without another write there.
   */
  #onLockLost(reason: string): void {
    this.#lockLost = true;
    this.#exitCode = Math.max(this.#exitCode, 78);
    this.#logger.error(
      { event: 'state.lock.lost', reason, inHand: this.#inHand() },
      `lost the state directory lock: ${reason}. Two porters share ${this.#config.stateDir}: this one stops at once and writes nothing more there; a command it had in hand stays PROCESSING (settle it in the store dashboard); give each porter its own stateDir`,
    );
    this.#options.onLockLost?.();
    this.#lifecycle.stopOnce();
    (this.#fleet as Fleet | undefined)?.abandon();
  }

  #inHand(): string[] {
    return ((this.#fleet as Fleet | undefined)?.parts ?? []).flatMap((parts) => parts.loop.health().inHand ?? []);
  }

  /** Stops whatever still runs and lets go of the state directory; never rejects. */
  async close(): Promise<void> {
    this.#lifecycle.halt();
    await Promise.allSettled([this.#fleet.stop(0), this.#health?.close(), this.#agones?.close(), this.#webhook?.close()]);
    if (this.#lockLost) {
      this.#lock.release();
      this.#lifecycle.finish();
      return;
    }
    await this.#history.close();
    try {
      this.#journal.flush();
    } catch (error) {
      this.#logger.warn(
        { event: 'journal.flush.failed', err: error },
        'could not write the last settled reports to the journal: they will be reported again, harmlessly, on the next start',
      );
    }
    this.#journal.close();
    this.#lock.release();
    this.#lifecycle.finish();
  }

  /** Says so, with the exit code. */
  stopped(): number {
    this.#logger.info({ event: 'porter.stopped', exitCode: this.#exitCode, unreported: this.#journal.pending().length }, 'porter stopped');
    return this.#exitCode;
  }
}

/** Claims no configured store can report stay PROCESSING on the platform: said at start and after each reload (and in /healthz). */
function warnUnreportable(fleet: Fleet, logger: Logger): void {
  const stuck = fleet.unreportable();
  if (stuck.length === 0) return;
  logger.warn(
    {
      event: 'leftovers.storeless',
      commands: stuck.map((c) => `${c.serverId}/${c.id}`),
      stores: [...new Set(stuck.map((c) => c.store ?? '(not recorded)'))],
    },
    'the journal holds unreported commands claimed for stores no longer configured: they stay PROCESSING on the platform; add the store back (its servers need not be) to report them, or settle them in the store dashboard',
  );
}

function fatalMessage(error: unknown): string {
  return isConfigurationError(error)
    ? 'configuration or credentials rejected: fix the configuration and start again'
    : 'porter stopped on an unexpected error';
}
