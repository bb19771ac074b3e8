import { serverLabel } from '../config/server-label.js';
import type { Logger } from 'pino';
import { createApiClient } from '../api/client.js';
import { startDeadline, systemClock, type Clock } from '../clock.js';
import type { Config } from '../config/schema.js';
import { Journal } from '../delivery/journal.js';
import { DeliveryLedger } from '../delivery/ledger.js';
import { lockStateDir } from '../delivery/state-lock.js';
import { exitCodeOf, isConfigurationError } from '../errors.js';
import { configSecrets } from '../config/secrets.js';
import { scrubberFor } from '../scrub.js';
import { buildServer, type ServerParts } from './build-server.js';

export interface DaemonOptions {
  readonly config: Config;
  readonly logger: Logger;
  readonly clock?: Clock;
  /** Aborting it is the same as SIGTERM (for `porter demo` and in-process tests). */
  readonly stopSignal?: AbortSignal;
  /** Install SIGTERM/SIGINT handlers (the CLI does; embedders may not want to). */
  readonly handleSignals?: boolean;
  /** Every secret value, so the health endpoint can keep them out of the error texts it shows. */
  readonly secrets?: () => readonly string[];
}

/**
 * Runs every configured server's delivery loop until stopped. Resolves with the process exit
 * code (docs/design.md#cli-and-exit-codes): 0 after a clean stop, 78 on a configuration or credential error, 1 otherwise.
 */
export async function runDaemon(options: DaemonOptions): Promise<number> {
  const { config, logger } = options;
  const clock = options.clock ?? systemClock;
  const unlock = await lockStateDir(config.stateDir, { logger });
  const journal = new Journal(config.stateDir, { now: () => clock.now() });
  // Every secret of the config, whoever started the daemon, plus any the caller knows besides.
  const ownSecrets = configSecrets(config);
  const scrub = scrubberFor(() => [...ownSecrets, ...(options.secrets?.() ?? [])]);
  const history = new DeliveryLedger({ stateDir: config.stateDir, maxBytes: config.history.maxBytes, scrub, clock, logger });
  const client = createApiClient(config.api, { logger });
  // prom-client is loaded only when the endpoint is configured.
  const health = config.health
    ? (await import('../health/wire.js')).healthWiring(config, { logger, clock, ...(options.secrets ? { secrets: options.secrets } : {}) })
    : undefined;
  const observer = health?.daemonOptions.observer;
  const servers = config.servers.map((server) =>
    buildServer(server, { config, client, journal, history, clock, logger, scrub, ...(observer ? { observer } : {}) }),
  );
  const stop = new AbortController();
  const hard = new AbortController();
  const removeSignalHandlers = options.handleSignals ? onStopSignals(requestStop) : () => {};
  options.stopSignal?.addEventListener('abort', requestStop, { once: true });
  let exitCode = 0;
  let cancelDrainBound = () => {};

  function requestStop(): void {
    if (stop.signal.aborted) {
      logger.warn('second stop signal: giving up on the command in hand (it stays journaled)');
      hard.abort();
      return;
    }
    logger.info({ drainMs: config.shutdown.drainMs }, 'stopping: no new pulls; finishing the command in hand');
    stop.abort();
    cancelDrainBound = startDeadline(clock, config.shutdown.drainMs, () => hard.abort());
  }

  try {
    warnAboutOrphans(journal, config, logger);
    // Before any claim: a health port already in use must stop porter while it holds nothing.
    await health?.daemonOptions.onStarted({ servers, journal, history });
    await Promise.all(servers.map((parts) => firstConnect(parts, logger)));
    for (const parts of servers) parts.players.startWatching(stop.signal);
    logger.info({ servers: servers.map((s) => serverLabel(s.server)), stateDir: config.stateDir }, 'porter started');
    const loops = servers.map((parts) =>
      parts.loop.run({ stop: stop.signal, hard: hard.signal }).catch((error: unknown) => {
        exitCode = Math.max(exitCode, exitCodeOf(error));
        logger.error({ err: error, server: serverLabel(parts.server) }, fatalMessage(error));
        if (!stop.signal.aborted) requestStop();
      }),
    );
    await Promise.all(loops);
  } catch (error) {
    exitCode = exitCodeOf(error);
    logger.error({ err: error }, fatalMessage(error));
  } finally {
    cancelDrainBound();
    removeSignalHandlers();
    stop.abort();
    await Promise.allSettled([...servers.map((parts) => parts.executor.close()), health?.close()]);
    await client.close().catch(() => undefined);
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

/** A wrong password is a configuration error at once; an unreachable server is retried by the loop. */
async function firstConnect(parts: ServerParts, logger: Logger): Promise<void> {
  try {
    await parts.executor.connect();
  } catch (error) {
    if (isConfigurationError(error)) throw error;
    logger.warn(
      { server: serverLabel(parts.server), err: (error as Error).message },
      'game server not reachable yet: nothing is pulled until it is; retrying with backoff',
    );
  }
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

/** porter's own handler for SIGTERM and SIGINT while it runs: the first drains, the second stops at once. */
const STOP_SIGNALS = ['SIGTERM', 'SIGINT'] as const;

function onStopSignals(handler: () => void): () => void {
  for (const signal of STOP_SIGNALS) process.on(signal, handler);
  return () => {
    for (const signal of STOP_SIGNALS) process.off(signal, handler);
  };
}
