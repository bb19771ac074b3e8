import type { Command } from 'commander';
import { action, daemonLogger, knownSecretValues, loadConfigFor } from './common.js';

export function registerRun(program: Command): void {
  program
    .command('run')
    .description('run the delivery daemon in the foreground (JSON log lines on stdout, pretty on a TTY)')
    .option('-c, --config <file>', 'config file (default: $PORTER_CONFIG)')
    .addHelpText(
      'after',
      '\nExample:\n  porter run -c /etc/porter/config.json\n\nStops gracefully on SIGTERM/SIGINT: no new pulls, the command in hand is finished and reported.\nSIGHUP reads the config and secret files again (an invalid file is logged and the running config kept).',
    )
    .action(
      action(async (options: { config?: string }) => {
        // Node's default for SIGHUP ends the process; until the daemon installs its reload handler, one is ignored.
        const ignoreHangup = () => {};
        process.on('SIGHUP', ignoreHangup);
        const config = await loadConfigFor(options.config);
        const logger = await daemonLogger(config);
        const [{ runDaemon }, { flushLogger }] = await Promise.all([import('../daemon/daemon.js'), import('../log.js')]);
        const code = await runDaemon({
          config,
          logger,
          handleSignals: true,
          secrets: knownSecretValues,
          reload: () => loadConfigFor(options.config),
        });
        process.off('SIGHUP', ignoreHangup);
        await flushLogger(logger);
        return code;
      }),
    );
}
