import type { Command } from 'commander';
import type { Config } from '../config/schema.js';
import { action, daemonLogger, loadShardFor, shardFrom } from './common.js';
import { stopRequestedEarly, takeEarlySignals } from './early-signals.js';
import type { SecretBook } from '../secret-book.js';

export function registerRun(program: Command, secrets: SecretBook): void {
  program
    .command('run')
    .description('run the delivery daemon in the foreground (JSON log lines on stdout, pretty on a TTY)')
    .option('-c, --config <file>', 'config file (default: $PORTER_CONFIG)')
    .option(
      '--shard <I/N>',
      "run only shard I of N of the configured servers (I may be auto: the host name's trailing -<number>); default: $PORTER_SHARD, else all",
    )
    .addHelpText(
      'after',
      '\nExample:\n  porter run -c /etc/porter/config.json\n\nStops gracefully on SIGTERM/SIGINT: no new pulls, the command in hand is finished and reported.\nSIGHUP reads the config and secret files again (an invalid file is logged and the running config kept).',
    )
    .action(
      action(secrets, async (options: { config?: string; shard?: string }) => {
        const shard = await shardFrom(options.shard);
        const config = await loadShardFor(options.config, shard, secrets);
        const logger = await daemonLogger(config, secrets);
        if (stopRequestedEarly()) {
          // Nothing was opened or claimed yet: there is nothing to drain.
          logger.info({ event: 'porter.stopped' }, 'stopped while starting: nothing was claimed; porter stopped');
          const { flushLogger } = await import('../log.js');
          await flushLogger(logger);
          return 0;
        }
        const { shardSummary } = await import('../config/shard.js');
        const sharded = (next: Config) => {
          const summary = shardSummary(next);
          if (summary !== undefined) logger.info({ event: 'shard.summary', shard: options.shard ?? process.env.PORTER_SHARD }, summary);
          return next;
        };
        sharded(config);
        const [{ runDaemon }, { flushLogger }, { agonesPortFrom }] = await Promise.all([
          import('../daemon/daemon.js'),
          import('../log.js'),
          import('../agones/state.js'),
        ]);
        const agonesPort = agonesPortFrom(config.agones?.sdkHttpPort, process.env);
        // Outlives the daemon's own handlers: a second SIGTERM, or a SIGHUP (a reload racing the
        // stop), while porter, stopped, flushes its log and exits must not end it by the signal
        // instead of its exit code.
        for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.on(signal, ignoreOnceStopped);
        const code = await runDaemon({
          config,
          logger,
          handleSignals: true,
          secrets,
          reload: async () => sharded(await loadShardFor(options.config, shard, secrets)),
          earlySignals: takeEarlySignals,
          // Another porter owns the state directory now: not one more write there (the log is synchronous).
          onLockLost: () => process.exit(78),
          ...(agonesPort === undefined ? {} : { agonesPort }),
        });
        await flushLogger(logger);
        process.exit(code);
      }),
    );
}

/** A stop or reload signal once the daemon has stopped changes nothing: porter is already on its way out. */
function ignoreOnceStopped(): void {}
