import { serverLabel } from '../config/server-label.js';
import type { Logger } from 'pino';
import { MAX_TIMER_MS, systemClock, type Clock } from '../clock.js';
import type { Config, ResolvedServer } from '../config/schema.js';
import { Journal } from '../delivery/journal/journal.js';
import { DeliveryHistory } from '../delivery/history/history.js';
import { lockStateDir } from '../delivery/state/state-lock.js';
import { exitCodeOf, isConfigurationError } from '../errors.js';
import { configSecrets } from '../config/secrets.js';
import { scrubberFor } from '../scrub.js';
import { Fleet } from './fleet.js';
import { guardOpenFiles, openFileLimit } from '../net/open-files.js';
import { openFilesWarning } from './open-files-need.js';
import { describePlan, effectiveConfig, planReload } from './reload-plan.js';
import { onReloadSignal, onStopSignals } from './signals.js';
import { webhookWiring } from './webhook-wiring.js';

export interface DaemonOptions {
  readonly config: Config;
  readonly logger: Logger;
  readonly clock?: Clock;
  /** Aborting it is the same as SIGTERM (for `porter demo` and in-process tests). */
  readonly stopSignal?: AbortSignal;
  /** Install SIGTERM/SIGINT (stop) and SIGHUP (reload) handlers (the CLI does; embedders may not want to). */
  readonly handleSignals?: boolean;
  /** Every secret value, so the health endpoint can keep them out of the error texts it shows. */
  readonly secrets?: () => readonly string[];
  /**
   * Loads the configuration again (SIGHUP). Rejects with a ConfigError when the files are
   * invalid; porter then keeps running as it was. Without it a SIGHUP is logged and ignored.
   */
  readonly reload?: () => Promise<Config>;
  /**
   * Called once the daemon's SIGHUP handler is in place: true when a SIGHUP came earlier (while
   * porter loaded), so the daemon reloads once it runs.
   */
  readonly reloadAtStart?: () => boolean;
  /** The Agones SDK's HTTP port on localhost, inside a GameServer pod (docs/design.md#agones). */
  readonly agonesPort?: number;
}

/**
 * Runs every configured server's delivery loop until stopped, applying reloads on SIGHUP.
 * Resolves with the process exit code (docs/design.md#cli-and-exit-codes): 0 after a clean stop,
 * 78 on a configuration or credential error, 1 otherwise.
 */
export async function runDaemon(options: DaemonOptions): Promise<number> {
  const { logger } = options;
  let config = options.config;
  const clock = options.clock ?? systemClock;
  const unlock = await lockStateDir(config.stateDir, { logger });
  const journal = new Journal(config.stateDir, { now: () => clock.now() });
  // Every secret of every configuration this daemon has run, whoever started it, plus any the caller knows besides.
  const ownSecrets = new Set(configSecrets(config));
  const scrub = scrubberFor(() => [...ownSecrets, ...(options.secrets?.() ?? [])]);
  const history = new DeliveryHistory({ stateDir: config.stateDir, maxBytes: config.history.maxBytes, scrub, clock, logger });
  // prom-client is loaded only when the endpoint is configured.
  const health = config.health
    ? (await import('../health/wire.js')).healthWiring(config, { logger, clock, ...(options.secrets ? { secrets: options.secrets } : {}) })
    : undefined;
  const observer = health?.daemonOptions.observer;
  const agones =
    options.agonesPort === undefined
      ? undefined
      : (await import('../agones/wiring.js')).startAgones({ port: options.agonesPort, clock, logger, onShutdown: () => requestStop() });
  const fleet = new Fleet(config, {
    journal,
    history,
    clock,
    logger,
    scrub,
    ...(observer ? { observer } : {}),
    ...(agones ? { gate: agones.gate } : {}),
    onFatal,
    onStoreRefused,
  });
  const webhook = webhookWiring(config, {
    logger,
    clock,
    wake: (store) => fleet.wakeStore(store),
    ...(health && { onOutcome: health.webhookEvent }),
  });

  const stop = new AbortController();
  let exitCode = 0;
  // Reloads queue behind the start: a SIGHUP while porter starts is applied once it runs.
  let started = () => {};
  let reloading = new Promise<void>((resolve) => (started = resolve));
  let reloadAgain = false;
  const removeStopHandlers = options.handleSignals ? onStopSignals(requestStop) : () => {};
  const removeReloadHandler = options.handleSignals ? onReloadSignal(requestReload) : () => {};
  if (options.reloadAtStart?.()) requestReload();
  options.stopSignal?.addEventListener('abort', requestStop, { once: true });

  function requestStop(): void {
    if (stop.signal.aborted) {
      logger.warn('second stop signal: giving up on the command in hand (it stays journaled)');
      fleet.abandon();
      return;
    }
    logger.info({ drainMs: config.shutdown.drainMs }, 'stopping: no new pulls; finishing the command in hand');
    stop.abort();
    fleet.requestStop(config.shutdown.drainMs);
  }

  /** A loop's fatal error stops porter; when a reload started that server and others run, only that server. */
  function onFatal(error: unknown, server: ResolvedServer, fromReload: boolean): void {
    if (fromReload && isConfigurationError(error) && fleet.size > 1) {
      logger.error(
        { err: error, server: serverLabel(server) },
        'this server stopped: fix its settings and reload (systemctl reload porter, or kill -HUP); the other servers go on',
      );
      return;
    }
    exitCode = Math.max(exitCode, exitCodeOf(error));
    logger.error({ err: error, server: serverLabel(server) }, fatalMessage(error));
    requestStop();
  }

  /** A store's token was refused and its servers stop; when no store is left to deliver for, porter stops with 78. */
  function onStoreRefused(error: unknown, _store: unknown, everyServer: boolean): void {
    if (!everyServer) return;
    exitCode = Math.max(exitCode, exitCodeOf(error));
    logger.error(
      {
        stores: fleet
          .stores()
          .filter((store) => store.refused)
          .map((store) => store.name),
      },
      fatalMessage(error),
    );
    // Already stopping (SIGTERM came first): a second requestStop would abandon the command in hand.
    if (!stop.signal.aborted) requestStop();
  }

  function requestReload(): void {
    if (stop.signal.aborted) return;
    if (!options.reload) {
      logger.warn('SIGHUP: this porter has no configuration file to read again; nothing changed');
      return;
    }
    reloadAgain = true;
    reloading = reloading.then(async () => {
      // Signals that arrive while one reload runs make one more, not one each.
      if (!reloadAgain || stop.signal.aborted) return;
      reloadAgain = false;
      await reload().catch((error: unknown) => {
        logger.error({ err: error }, 'configuration reload failed part way: servers not restarted yet stay stopped until the next reload');
      });
    });
  }

  async function reload(): Promise<void> {
    // Whether or not the configuration loads: a renewed certificate is what a SIGHUP often means.
    await webhook?.reloadTls();
    let next: Config;
    try {
      next = await options.reload!();
    } catch (error) {
      logger.error(
        { err: (error as Error).message },
        'configuration not reloaded: the new files are invalid; porter goes on with the running configuration',
      );
      return;
    }
    const plan = planReload(config, next);
    if (plan.rejected !== undefined) {
      logger.error(`configuration not reloaded: ${plan.rejected}`);
      return;
    }
    for (const secret of configSecrets(next)) ownSecrets.add(secret);
    for (const warning of next.warnings ?? []) logger.warn(warning);
    for (const setting of plan.deferred) logger.warn(`configuration reloaded, but ${setting} changes only when porter restarts`);
    const running = config;
    const applied = await fleet.apply(plan, effectiveConfig(config, next), stop.signal);
    config = applied.config;
    webhook?.useConfig(config);
    warnAboutOrphans(journal, config, logger);
    logger.info(
      { servers: fleet.parts.map((parts) => serverLabel(parts.server)), refused: applied.refused },
      `configuration reloaded: ${describePlan(plan, running)}`,
    );
  }

  try {
    warnAboutOrphans(journal, config, logger);
    const openFiles = openFilesWarning(config, openFileLimit());
    if (openFiles) {
      logger.warn(openFiles);
      // Game-server connections then leave the last few descriptors to the journal and the API.
      guardOpenFiles();
    }
    const initial = fleet.assemble();
    // Before any claim: a health port already in use must stop porter while it holds nothing.
    await health?.daemonOptions.onStarted({
      get servers() {
        return fleet.parts;
      },
      get stores() {
        return fleet.stores();
      },
      journal,
      history,
    });
    await webhook?.start();
    // A wrong password at start stops porter before anything is claimed (exit 78).
    await Promise.all(initial.map((runner) => runner.connect()));
    logger.info({ servers: initial.map((r) => serverLabel(r.parts.server)), stateDir: config.stateDir }, 'porter started');
    for (const runner of initial) if (!stop.signal.aborted) fleet.start(runner, false);
    started();
    // A porter with no server to run (a shard that holds none) waits for a reload or a stop all
    // the same: signal handlers alone do not keep Node's event loop alive.
    const keepAlive = setInterval(() => {}, MAX_TIMER_MS);
    await new Promise<void>((resolve) => stop.signal.addEventListener('abort', () => resolve(), { once: true }));
    clearInterval(keepAlive);
    await reloading;
    await fleet.stop(config.shutdown.drainMs);
  } catch (error) {
    exitCode = Math.max(exitCode, exitCodeOf(error));
    logger.error({ err: error }, fatalMessage(error));
  } finally {
    removeStopHandlers();
    removeReloadHandler();
    stop.abort();
    await Promise.allSettled([fleet.stop(0), health?.close(), agones?.close(), webhook?.close()]);
    await history.close();
    try {
      journal.flush();
    } catch (error) {
      logger.warn(
        { err: error },
        'could not write the last settled reports to the journal: they will be reported again, harmlessly, on the next start',
      );
    }
    journal.close();
    unlock();
  }
  logger.info({ exitCode, unreported: journal.pending().length }, 'porter stopped');
  return exitCode;
}

function warnAboutOrphans(journal: Journal, config: Config, logger: Logger): void {
  const configured = new Set(config.servers.map((s) => s.id));
  const orphans = journal.pending().filter((entry) => !configured.has(entry.serverId));
  if (orphans.length > 0) {
    logger.warn(
      { commands: orphans.map((e) => `${e.serverId}/${e.id}`) },
      'the journal holds unreported commands of servers no longer configured: add the server back to report them',
    );
  }
}

function fatalMessage(error: unknown): string {
  return isConfigurationError(error)
    ? 'configuration or credentials rejected: fix the configuration and start again'
    : 'porter stopped on an unexpected error';
}
