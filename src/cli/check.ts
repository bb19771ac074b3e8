import type { Command } from 'commander';
import { UsageError } from '../errors.js';
import { action, shardFrom } from './common.js';
import type { SecretBook } from '../secret-book.js';

export function registerCheck(program: Command, secrets: SecretBook): void {
  program
    .command('check')
    .description('check the config, each game server login and player list, the API token and the state directory; claims nothing')
    .option('-c, --config <file>', 'config file (default: $PORTER_CONFIG)')
    .option(
      '--unit [name]',
      "run the check through systemd-run as the unit's service runs: its dynamic user, state directory and LoadCredential= secrets (root; default unit: porter; the config from its ExecStart unless -c)",
    )
    .option('--shard <I/N>', 'check only the servers of shard I of N, as porter run --shard runs them (default: $PORTER_SHARD, else all)')
    .addHelpText(
      'after',
      '\nExamples:\n  porter check -c /etc/porter/config.json\n  sudo porter check --unit porter\n\nExit 0 only when every line is ✔; 78 when a configuration or credentials check failed; 1 otherwise.',
    )
    .action(
      action(secrets, async (options: { config?: string; shard?: string; unit?: string | true }) => {
        if (options.unit !== undefined) {
          if (options.shard !== undefined) throw new UsageError('--unit checks what the unit runs: it takes no --shard');
          const { checkAsUnit } = await import('../init/unit-check.js');
          return checkAsUnit(options.unit === true ? 'porter' : options.unit, options.config);
        }
        const shard = await shardFrom(options.shard);
        const { runChecks } = await import('./check-run.js');
        return runChecks(options.config, shard, secrets);
      }),
    );
}
